import asyncio

async def fetch(i):
    await asyncio.sleep(0.01 if i != 2 else 1.0)
    return {"shard": i, "docs": 1000 + i}

async def main():
    collected, timed_out = [], []
    for i in range(4):
        try:
            async with asyncio.timeout(0.1):
                collected.append(await fetch(i))
        except TimeoutError:
            timed_out.append(i)
    print("collected shards:", [c["shard"] for c in collected])
    print("timed out shards:", timed_out)
    print("docs:", sum(c["docs"] for c in collected))

asyncio.run(main())
