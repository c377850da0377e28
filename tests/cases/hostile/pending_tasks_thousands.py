import asyncio
async def napper(i):
    await asyncio.sleep(i % 7)
    return i
results = await asyncio.gather(*(napper(i) for i in range(5_000)))
print(len(results), sum(results))
