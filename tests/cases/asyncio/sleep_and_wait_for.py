# sluice: answers = {"fetch": "fast"}
import asyncio, time

async def slow():
    await asyncio.sleep(30)
    return "slow"

start = time.monotonic()
try:
    await asyncio.wait_for(slow(), timeout=0.5)
except TimeoutError:
    print("timed out on the sandbox clock")
print(await asyncio.wait_for(fetch({}), timeout=5))
await asyncio.sleep(2)
print("virtual seconds passed:", round(time.monotonic() - start))
