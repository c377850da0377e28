import asyncio

MAX_CONCURRENT = 3
active = 0
peak = 0

async def fetch(sem, i):
    global active, peak
    async with sem:
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.01)
        active -= 1
        return {"page": i, "items": i * 10}

async def main():
    sem = asyncio.Semaphore(MAX_CONCURRENT)
    pages = await asyncio.gather(*(fetch(sem, i) for i in range(1, 11)))
    print("pages fetched:", len(pages))
    print("total items:", sum(p["items"] for p in pages))
    print("peak concurrency:", peak, "<=", MAX_CONCURRENT, peak <= MAX_CONCURRENT)

asyncio.run(main())
