class Loop:
    def __repr__(self):
        return repr(Loop())

try:
    repr(Loop())
except RecursionError:
    print("repr: RecursionError")
try:
    eval("(" * 100000 + ")" * 100000)
except (RecursionError, SyntaxError, MemoryError) as e:
    print("parser:", type(e).__name__)
import sys
sys.setrecursionlimit(100000)
def fact(n):
    return 1 if n == 0 else n * fact(n - 1)
try:
    fact(50000)
except RecursionError:
    print("fact: RecursionError")
print(len(str(fact(900))))
