# sluice: answers = {"fetch": ["one", "two", "three"]}
# sluice: pending = [2, 1]
import asyncio

async def both():
    return await asyncio.gather(fetch({"n": 1}), fetch({"n": 2}))

def helper():
    # asyncio.run inside a function: the loop cannot return to the host without losing
    # this frame, so it blocks in the host instead
    return asyncio.run(both())

print(helper())
print(asyncio.run(fetch({"n": 3})))
