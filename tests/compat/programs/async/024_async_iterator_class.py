import asyncio

class TickerStream:
    def __init__(self, prices):
        self.prices = prices
        self.index = 0

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self.index >= len(self.prices):
            raise StopAsyncIteration
        await asyncio.sleep(0.002)
        price = self.prices[self.index]
        self.index += 1
        return self.index, price

async def main():
    stream = TickerStream([101.5, 102.0, 99.75, 103.2, 104.0])
    prev = None
    async for tick, price in stream:
        change = "" if prev is None else f"{price - prev:+.2f}"
        print(f"tick {tick}: {price:.2f} {change}".rstrip())
        prev = price
    print("stream exhausted at index", stream.index)

asyncio.run(main())
