def nest(n):
    yield from nest(n + 1)
try:
    next(nest(0))
except RecursionError:
    print("RecursionError")
