import asyncio

async def fetch(i):
    await asyncio.sleep(0.002 * (6 - i))
    return {"id": i, "price": round(9.99 * i, 2)}

async def main():
    results = []
    for coro in asyncio.as_completed([fetch(i) for i in range(1, 6)]):
        res = await coro
        results.append(res)
    print("received", len(results), "results")
    for r in sorted(results, key=lambda r: r["id"]):
        print(f"item {r['id']}: ${r['price']:.2f}")
    print("total:", round(sum(r["price"] for r in results), 2))

asyncio.run(main())
