import asyncio

async def fetch(i):
    await asyncio.sleep(0.01)
    if i == 3:
        raise ValueError(f"bad payload for item {i}")
    if i == 5:
        raise KeyError("missing_field")
    return i * 2

async def main():
    try:
        async with asyncio.TaskGroup() as tg:
            for i in range(1, 7):
                tg.create_task(fetch(i))
    except* ValueError as eg:
        for e in eg.exceptions:
            print("ValueError:", e)
    except* KeyError as eg:
        for e in eg.exceptions:
            print("KeyError:", e)
    print("recovered")

asyncio.run(main())
