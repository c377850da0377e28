import asyncio

async def job(name, steps, trace):
    for s in range(steps):
        trace.append(f"{name}:{s}")
        await asyncio.sleep(0)
    return f"{name} done after {steps} steps"

async def main():
    trace = []
    t1 = asyncio.create_task(job("extract", 3, trace), name="extract")
    t2 = asyncio.create_task(job("load", 2, trace), name="load")
    print("tasks created:", t1.get_name(), t2.get_name())
    r1 = await t1
    r2 = await t2
    print(r1)
    print(r2)
    print("steps recorded:", len(trace))
    print("extract steps:", [t for t in trace if t.startswith("extract")])

asyncio.run(main())
