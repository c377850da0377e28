# sluice: limits = {"memory_bytes": 134217728}
# sluice: stop = "memory_limit_exceeded"
blocks = []
while True:
    blocks.append(bytearray(8 * 1024 * 1024))
