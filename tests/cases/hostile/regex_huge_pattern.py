# sluice: limits = {"time_ms": 2000}
# sluice: stop_any = ["", "execution_time_exceeded"]
import re
try:
    pattern = re.compile("(" + "a?" * 5_000 + ")" + "a" * 5_000)
    print("compiled")
except (RecursionError, re.error, MemoryError, OverflowError) as e:
    print("refused:", type(e).__name__)
