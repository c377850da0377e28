# sluice: stop = "stack_limit_exceeded"
import sys
# Find the real setrecursionlimit behind the runtime's clamp and raise it anyway.
original = sys.setrecursionlimit.__closure__[0].cell_contents
original(10 ** 7)
def dive(n):
    return dive(n + 1) + 1
dive(0)
