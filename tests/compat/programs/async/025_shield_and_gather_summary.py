import asyncio

async def fetch(i):
    await asyncio.sleep(0.01)
    return {"region": ["us", "eu", "ap"][i % 3], "latency_ms": 40 + i * 13 % 50}

async def main():
    results = await asyncio.gather(*(fetch(i) for i in range(9)))
    summary = {}
    for r in results:
        s = summary.setdefault(r["region"], {"n": 0, "total": 0})
        s["n"] += 1
        s["total"] += r["latency_ms"]
    for region, s in sorted(summary.items()):
        print(f"{region}: n={s['n']} avg={s['total'] / s['n']:.1f}ms")
    saved = await asyncio.shield(fetch(100))
    print("shielded:", saved)
    print("is coroutine fn:", asyncio.iscoroutinefunction(fetch))

asyncio.run(main())
