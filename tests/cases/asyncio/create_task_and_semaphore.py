# sluice: answers = {"fetch": "r"}
# sluice: pending = [2, 2, 1]
import asyncio

limit = asyncio.Semaphore(2)
active = 0
peak = 0

async def guarded(i):
    global active, peak
    async with limit:
        active += 1
        peak = max(peak, active)
        value = await fetch({"i": i})
        active -= 1
        return f"{value}{i}"

tasks = [asyncio.create_task(guarded(i)) for i in range(5)]
done = await asyncio.gather(*tasks)
print(done, "peak", peak)
