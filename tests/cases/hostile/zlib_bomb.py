# sluice: limits = {"memory_bytes": 134217728}
# sluice: stdout_contains = ["compressed to True"]
# sluice: stop_any = ["", "memory_limit_exceeded"]
import zlib
bomb = zlib.compress(b"\0" * (50 << 20), 9)
print("compressed to", len(bomb) < 100_000)
try:
    data = zlib.decompress(bomb * 10)
    print("decompressed", len(data))
except (MemoryError, zlib.error) as e:
    print("refused:", type(e).__name__)
