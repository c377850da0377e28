from collections import deque

workers = deque(["w1", "w2", "w3"])
jobs = [f"job{i}" for i in range(1, 8)]
assignment = {}
for job in jobs:
    assignment[job] = workers[0]
    workers.rotate(-1)

for job, w in assignment.items():
    print(job, "->", w)
d = deque(range(6))
d.rotate(2)
print("rotate 2:", list(d))
d.rotate(-3)
print("rotate -3:", list(d))
d.extendleft([10, 11])
print("extendleft:", list(d), "popleft:", d.popleft())
