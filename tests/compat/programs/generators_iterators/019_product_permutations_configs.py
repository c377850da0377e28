from itertools import product, combinations, permutations

regions = ["us", "eu"]
sizes = ["small", "large"]
replicas = [1, 3]

configs = [dict(region=r, size=s, replicas=n) for r, s, n in product(regions, sizes, replicas)]
print(len(configs), "configs")
for c in configs[:3]:
    print(" ", c)

services = ["api", "db", "cache", "queue"]
pairs = list(combinations(services, 2))
print(len(pairs), "pairs:", pairs[:4])
orderings = ["->".join(p) for p in permutations(["build", "test", "deploy"])]
print(orderings)
cost = {"small": 10, "large": 40}
cheapest = min(configs, key=lambda c: (cost[c["size"]] * c["replicas"], c["region"]))
print("cheapest:", cheapest)
