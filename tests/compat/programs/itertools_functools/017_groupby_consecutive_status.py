from itertools import groupby

checks = ["up", "up", "up", "down", "down", "up", "degraded", "degraded", "up", "up"]
start = 0
incidents = []
for status, grp in groupby(checks):
    n = len(list(grp))
    print(f"minute {start:2d}-{start + n - 1:2d}: {status} x{n}")
    if status != "up":
        incidents.append((status, n))
    start += n
print("incidents:", incidents)
print("longest outage:", max((n for s, n in incidents if s == "down"), default=0), "min")
