from functools import reduce

shards = [
    {"errors": 2, "requests": 100, "p99": 120},
    {"errors": 0, "requests": 80, "p99": 95},
    {"errors": 5, "requests": 230, "p99": 310},
]

def merge(acc, d):
    return {
        "errors": acc["errors"] + d["errors"],
        "requests": acc["requests"] + d["requests"],
        "p99": max(acc["p99"], d["p99"]),
    }

total = reduce(merge, shards)
print(total)
print(f"error rate {total['errors'] / total['requests']:.2%}")
import math
print("gcd via reduce:", reduce(math.gcd, [84, 126, 210]))
print("factorial 10:", reduce(lambda a, b: a * b, range(1, 11), 1))
