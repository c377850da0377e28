# sluice: limits = {"memory_bytes": 134217728, "time_ms": 20000}
# sluice: stop = "memory_limit_exceeded"
layers = []
while True:
    layers = [layers, [0] * 10_000]
