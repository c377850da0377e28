import asyncio

async def fetch(i):
    await asyncio.sleep(0.01 * (i % 3))
    return {"sku": f"SKU-{i}", "stock": 100 - i * 7}

async def main():
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(fetch(i)) for i in range(1, 6)]
    rows = [t.result() for t in tasks]
    for row in rows:
        print(row["sku"], row["stock"])
    low = [r["sku"] for r in rows if r["stock"] < 80]
    print("low stock:", low)
    print("all done:", all(t.done() for t in tasks))

asyncio.run(main())
