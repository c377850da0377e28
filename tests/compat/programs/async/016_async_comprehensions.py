import asyncio

async def fetch(i):
    await asyncio.sleep(0.001)
    return {"id": i, "temp_c": 15 + (i * 7) % 20}

async def readings(n):
    for i in range(n):
        yield await fetch(i)

async def main():
    temps = [r["temp_c"] async for r in readings(8)]
    hot = {r["id"]: r["temp_c"] async for r in readings(8) if r["temp_c"] > 25}
    fetched = [await fetch(i) for i in (10, 11)]
    print("temps:", temps)
    print("hot:", hot)
    print("extra:", fetched)
    print(f"avg: {sum(temps) / len(temps):.2f}")

asyncio.run(main())
