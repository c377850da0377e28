import asyncio, gc
async def never():
    await asyncio.sleep(0)
leaked = [never() for _ in range(20_000)]
del leaked
gc.collect()
print("leaked coroutines cost nothing lasting")
