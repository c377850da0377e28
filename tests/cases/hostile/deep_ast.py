# sluice: stop_any = ["", "stack_limit_exceeded"]
try:
    eval("1" + "+1" * 100_000)
    print("evaluated")
except (RecursionError, MemoryError, SyntaxError) as e:
    print("refused:", type(e).__name__)
