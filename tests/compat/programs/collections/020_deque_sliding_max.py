from collections import deque

def sliding_max(values, k):
    q, out = deque(), []
    for i, v in enumerate(values):
        while q and values[q[-1]] <= v:
            q.pop()
        q.append(i)
        if q[0] <= i - k:
            q.popleft()
        if i >= k - 1:
            out.append(values[q[0]])
    return out

latency = [120, 85, 300, 90, 95, 410, 70, 60, 200, 180]
print("latency:", latency)
print("max over 3:", sliding_max(latency, 3))
print("max over 5:", sliding_max(latency, 5))
