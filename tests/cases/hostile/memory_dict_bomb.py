# sluice: limits = {"memory_bytes": 134217728, "time_ms": 20000}
# sluice: stop = "memory_limit_exceeded"
d = {}
i = 0
while True:
    d[i] = str(i) * 10
    i += 1
