import asyncio

async def query_replica(name, delay):
    await asyncio.sleep(delay)
    return {"replica": name, "rows": 42}

async def main():
    tasks = {
        asyncio.create_task(query_replica("eu-1", 0.2)),
        asyncio.create_task(query_replica("us-1", 0.01)),
        asyncio.create_task(query_replica("ap-1", 0.25)),
    }
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    winner = done.pop().result()
    print("fastest replica:", winner["replica"], "rows:", winner["rows"])
    for t in pending:
        t.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    print("cancelled:", sum(t.cancelled() for t in pending), "of", len(pending))

asyncio.run(main())
