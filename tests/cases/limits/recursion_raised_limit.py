import sys
sys.setrecursionlimit(10 ** 9)
print(sys.getrecursionlimit() <= 10000)
def down(n):
    return down(n + 1)
try:
    down(0)
except RecursionError:
    print("RecursionError")
