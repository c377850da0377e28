from itertools import permutations
import math

sites = {"depot": (0, 0), "A": (2, 3), "B": (5, 1), "C": (1, 6)}

def route_len(order):
    pts = ["depot", *order, "depot"]
    return sum(math.dist(sites[p], sites[q]) for p, q in zip(pts, pts[1:]))

options = sorted(permutations(["A", "B", "C"]), key=route_len)
for perm in options:
    print(" -> ".join(perm), f"{route_len(perm):.3f}")
best = options[0]
print("best:", best, "| permutations of 4 taken 2:", len(list(permutations(range(4), 2))))
