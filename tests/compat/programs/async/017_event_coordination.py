import asyncio

async def warm_cache(ready, cache):
    await asyncio.sleep(0.01)
    cache.update({"rate_usd_eur": 0.92, "rate_usd_gbp": 0.79})
    ready.set()

async def convert(ready, cache, amount, currency):
    await ready.wait()
    return f"{amount:.2f} USD = {amount * cache[f'rate_usd_{currency}']:.2f} {currency.upper()}"

async def main():
    ready = asyncio.Event()
    cache = {}
    print("ready before:", ready.is_set())
    results = await asyncio.gather(
        convert(ready, cache, 100, "eur"),
        convert(ready, cache, 250.5, "gbp"),
        warm_cache(ready, cache),
    )
    for line in results[:2]:
        print(line)
    print("ready after:", ready.is_set())

asyncio.run(main())
