# sluice: limits = {"memory_bytes": 134217728}
try:
    huge = bytearray(1024 * 1024 * 1024)
except MemoryError:
    print("MemoryError caught, still running")
print(sum(range(10)))
