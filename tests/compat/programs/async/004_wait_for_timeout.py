import asyncio

async def slow_tool(name, delay):
    await asyncio.sleep(delay)
    return f"{name} finished"

async def call_with_timeout(name, delay, timeout):
    try:
        return await asyncio.wait_for(slow_tool(name, delay), timeout=timeout)
    except asyncio.TimeoutError:
        return f"{name} timed out after {timeout}s"

async def main():
    calls = [("search", 0.01, 0.2), ("summarize", 0.5, 0.05), ("translate", 0.02, 0.2)]
    results = await asyncio.gather(*(call_with_timeout(*c) for c in calls))
    for r in results:
        print(r)
    print("timeouts:", sum("timed out" in r for r in results))

asyncio.run(main())
