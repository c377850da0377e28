"""An MCP server built on the official Python SDK whose tool list changes: `unlock` adds the
tool `secret` and says so with notifications/tools/list_changed (the test
`mcp::a_changed_tool_list_is_listed_again` watches Sluice pick it up). Over stdio, or over
streamable HTTP on 127.0.0.1 with `--http PORT`."""

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("changing")


def secret() -> str:
    """Appears after unlock."""
    return "the secret"


@server.tool()
async def unlock(ctx: Context) -> str:
    """Adds the tool `secret`."""
    server.add_tool(secret, name="secret")
    await ctx.session.send_tool_list_changed()
    return "unlocked"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
