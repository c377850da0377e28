import math
from functools import reduce

jobs = {"backup": 12, "reindex": 8, "report": 30, "sync": 20}  # interval in minutes
together = math.lcm(*jobs.values())
print(f"all jobs coincide every {together} min ({together / 60:.1f} h)")
print("gcd of intervals:", math.gcd(*jobs.values()))
for a, b in [("backup", "reindex"), ("report", "sync"), ("backup", "report")]:
    print(f"{a}+{b}: every {math.lcm(jobs[a], jobs[b])} min")
ratio = (1920, 1080)
g = math.gcd(*ratio)
print(f"aspect {ratio[0]}x{ratio[1]} -> {ratio[0] // g}:{ratio[1] // g}")
print("reduce lcm:", reduce(math.lcm, range(1, 11)))
