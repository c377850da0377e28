import asyncio

async def fetch(i):
    await asyncio.sleep(0.01)
    return {"id": i, "name": f"user-{i}", "score": (i * 17) % 50}

async def main():
    results = await asyncio.gather(*(fetch(i) for i in range(1, 7)))
    for r in results:
        print(f"{r['id']:>2} {r['name']:<8} {r['score']:>3}")
    best = max(results, key=lambda r: r["score"])
    print("best:", best["name"], "total:", sum(r["score"] for r in results))

asyncio.run(main())
