# sluice: answers = {"fetch": ["a", "b", "c"]}
import asyncio

async with asyncio.TaskGroup() as group:
    tasks = [group.create_task(fetch({"n": n})) for n in range(3)]
print([t.result() for t in tasks])
