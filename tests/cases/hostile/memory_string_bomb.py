# sluice: limits = {"memory_bytes": 134217728}
# sluice: stop = "memory_limit_exceeded"
s = "x"
while True:
    s = s + s
