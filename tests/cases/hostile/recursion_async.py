async def dive(n):
    return await dive(n + 1)
try:
    await dive(0)
except RecursionError:
    print("RecursionError")
