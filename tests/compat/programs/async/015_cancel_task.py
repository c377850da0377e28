import asyncio

async def long_poll(events):
    try:
        while True:
            await asyncio.sleep(0.01)
            events.append("tick")
    except asyncio.CancelledError:
        events.append("cleanup")
        raise

async def main():
    events = []
    task = asyncio.create_task(long_poll(events))
    await asyncio.sleep(0.035)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        print("task cancelled:", task.cancelled())
    print("ticked at least once:", events.count("tick") >= 1)
    print("last event:", events[-1])

asyncio.run(main())
