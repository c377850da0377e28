from collections import deque

graph = {
    "api": ["auth", "db"], "auth": ["db", "cache"], "db": ["disk"],
    "cache": [], "disk": [], "web": ["api", "cdn"], "cdn": [],
}

def bfs(start):
    dist = {start: 0}
    q = deque([start])
    while q:
        node = q.popleft()
        for nxt in graph[node]:
            if nxt not in dist:
                dist[nxt] = dist[node] + 1
                q.append(nxt)
    return dist

for node, d in bfs("web").items():
    print(f"{node:6} depth {d}")
print("unreachable from api:", sorted(set(graph) - set(bfs("api"))))
