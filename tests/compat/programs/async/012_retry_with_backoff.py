import asyncio

attempts = {}

async def flaky_fetch(key):
    attempts[key] = attempts.get(key, 0) + 1
    await asyncio.sleep(0.002)
    if attempts[key] < {"users": 1, "orders": 3, "billing": 9}[key]:
        raise ConnectionError(f"{key}: transient failure #{attempts[key]}")
    return {"key": key, "rows": len(key) * 11}

async def with_retry(key, retries=4, base_delay=0.002):
    for attempt in range(1, retries + 1):
        try:
            return await flaky_fetch(key)
        except ConnectionError as e:
            if attempt == retries:
                return {"key": key, "error": str(e)}
            await asyncio.sleep(base_delay * 2 ** (attempt - 1))

async def main():
    results = await asyncio.gather(*(with_retry(k) for k in ["users", "orders", "billing"]))
    for r in results:
        print(r)
    print("attempts:", dict(sorted(attempts.items())))

asyncio.run(main())
