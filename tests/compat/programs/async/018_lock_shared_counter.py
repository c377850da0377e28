import asyncio

class RateLimitedCounter:
    def __init__(self):
        self.lock = asyncio.Lock()
        self.counts = {}

    async def record(self, endpoint):
        async with self.lock:
            current = self.counts.get(endpoint, 0)
            await asyncio.sleep(0)
            self.counts[endpoint] = current + 1

async def client(counter, endpoints):
    for ep in endpoints:
        await counter.record(ep)

async def main():
    counter = RateLimitedCounter()
    plans = [["/users", "/orders"] * 5, ["/users"] * 7, ["/health", "/orders"] * 3]
    await asyncio.gather(*(client(counter, p) for p in plans))
    for ep, n in sorted(counter.counts.items()):
        print(f"{ep:<8} {n}")
    print("total:", sum(counter.counts.values()), "expected:", sum(map(len, plans)))

asyncio.run(main())
