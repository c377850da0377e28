# sluice: limits = {"memory_bytes": 134217728}
try:
    b = b"x" * (10 ** 12)
except (MemoryError, OverflowError):
    print("MemoryError, caught")
try:
    l = [0] * (10 ** 12)
except (MemoryError, OverflowError):
    print("too big, caught")
print("still here")
