import asyncio

class ToolError(Exception):
    def __init__(self, tool, code):
        super().__init__(f"{tool} failed with code {code}")
        self.tool, self.code = tool, code

async def run_tool(tool):
    await asyncio.sleep(0.005)
    if tool.startswith("x-"):
        raise ToolError(tool, 42)
    return f"{tool}: ok"

async def safe_run(tool):
    try:
        return await run_tool(tool)
    except ToolError as e:
        return f"{e.tool}: error {e.code} ({e})"
    finally:
        await asyncio.sleep(0)

async def main():
    tools = ["search", "x-scrape", "calc", "x-email"]
    tasks = [asyncio.create_task(safe_run(t)) for t in tools]
    for line in await asyncio.gather(*tasks):
        print(line)
    bare = asyncio.create_task(run_tool("x-raw"))
    await asyncio.sleep(0.02)
    exc = bare.exception()
    print("bare task exception:", type(exc).__name__, exc.code)

asyncio.run(main())
