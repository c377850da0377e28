# sluice: stop_any = ["", "stack_limit_exceeded"]
import json
try:
    json.loads("[" * 100_000 + "]" * 100_000)
    print("parsed")
except (RecursionError, ValueError, MemoryError) as e:
    print("refused:", type(e).__name__)
