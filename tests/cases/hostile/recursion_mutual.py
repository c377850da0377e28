def ping(n):
    return pong(n + 1)
def pong(n):
    return ping(n + 1)
try:
    ping(0)
except RecursionError:
    print("RecursionError")
