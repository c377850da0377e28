"""Drives Sluice's MCP server with the official Python `mcp` SDK, as a host would, and prints
what it saw as one JSON object (the Rust test `mcp::sluice_serves_mcp_*` checks it).

    client_check.py stdio SLUICE_BINARY ARG...
    client_check.py http URL API_KEY
"""

import asyncio
import json
import sys

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def summary(result):
    return {"is_error": bool(result.is_error), "text": text_of(result), "structured": result.structured_content}


async def check(session):
    seen = {}
    init = await session.initialize()
    seen["server_name"] = init.server_info.name
    listed = await session.list_tools()
    seen["tools"] = sorted(tool.name for tool in listed.tools)
    first = await session.call_tool("execute_python", {"code": "total = 20 + 22\nprint('set', total)"})
    seen["first"] = summary(first)
    container = first.structured_content["container_id"]
    second = await session.call_tool("execute_python", {"code": "print(total * 2)", "container_id": container})
    seen["second"] = summary(second)
    seen["search"] = summary(await session.call_tool("search_tools", {"query": "convert time between timezones", "limit": 3}))
    seen["with_tool"] = summary(await session.call_tool("execute_python", {
        "code": "import json\nr = json.loads(await time__convert_time(source_timezone='UTC', time='09:30', "
                "target_timezone='Asia/Tokyo'))\nprint(r['target']['datetime'][11:16])"}))
    seen["loop"] = summary(await session.call_tool("execute_python", {"code": "while True:\n    pass"}))
    seen["syntax"] = summary(await session.call_tool("execute_python", {"code": "def broken(:\n    pass"}))
    seen["no_code"] = summary(await session.call_tool("execute_python", {}))
    return seen


async def main():
    mode = sys.argv[1]
    if mode == "stdio":
        params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                seen = await check(session)
    else:
        url, key = sys.argv[2], sys.argv[3]
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120)) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    seen = await check(session)
    print(json.dumps(seen))


asyncio.run(main())
