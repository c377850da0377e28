"""The baseline of `cargo bench --bench mcp`: the same MCP tool called directly by the
official Python `mcp` SDK client over stdio, sequentially and in a gather of 100. Prints the
per-call medians (ms) as JSON.

    mcp_direct.py ROUNDS SEQUENTIAL GATHER SERVER_COMMAND ARG...
"""

import asyncio
import json
import statistics
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ARGS = {"timezone": "UTC"}


async def main():
    rounds, sequential, gather = (int(a) for a in sys.argv[1:4])
    params = StdioServerParameters(command=sys.argv[4], args=sys.argv[5:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(20):
                await session.call_tool("get_current_time", ARGS)
            one_by_one, together = [], []
            for _ in range(rounds):
                started = time.perf_counter()
                for _ in range(sequential):
                    await session.call_tool("get_current_time", ARGS)
                one_by_one.append((time.perf_counter() - started) * 1000 / sequential)
                started = time.perf_counter()
                await asyncio.gather(*[session.call_tool("get_current_time", ARGS) for _ in range(gather)])
                together.append((time.perf_counter() - started) * 1000 / gather)
    print(json.dumps({"sequential_ms": statistics.median(one_by_one), "gather_ms": statistics.median(together)}))


asyncio.run(main())
