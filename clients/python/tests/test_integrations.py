"""Each framework integration against the live server: FastMCP's CodeMode, LangChain,
Pydantic AI and smolagents, with the frameworks' own objects (no model over the network)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import Server

from sluice_client import AsyncSluice, Sluice


def lookup(q: str) -> str:
    """Looks a word up."""
    return q.upper()


def test_fastmcp_codemode_runs_its_code_in_sluice(server: Server) -> None:
    from fastmcp import Client, FastMCP
    from fastmcp.experimental.transforms.code_mode import CodeMode

    from sluice_client.integrations.fastmcp_provider import SluiceSandboxProvider

    shop = FastMCP("shop")

    @shop.tool
    def price(item: str) -> float:
        """The price of an item."""
        return {"apple": 1.5, "pear": 2.0}[item]

    code = (
        "a = await call_tool('price', {'item': 'apple'})\n"
        "b = await call_tool('price', {'item': 'pear'})\n"
        "return {'total': a['result'] + b['result'], 'items': 2}"
    )

    async def scenario() -> Any:
        async with AsyncSluice(server.base_url, "key-a") as sluice:
            shop.add_transform(CodeMode(sandbox_provider=SluiceSandboxProvider(sluice)))
            async with Client(shop) as client:
                listed = sorted(tool.name for tool in await client.list_tools())
                result = await client.call_tool("execute", {"code": code})
                return listed, result

    listed, result = asyncio.run(scenario())
    assert "execute" in listed and "price" not in listed, listed
    assert result.data == {"total": 3.5, "items": 2}, result


def test_a_langchain_tool_keeps_its_container(server: Server) -> None:
    from sluice_client.integrations.langchain_tool import sluice_tool

    with Sluice(server.base_url, "key-a") as sluice:
        tool = sluice_tool([lookup], sluice=sluice)
        assert tool.name == "execute_python" and "async def lookup(*, q: str)" in tool.description
        assert tool.invoke({"code": "word = await lookup(q='ab')\nprint(word)"}) == "AB\n"
        assert tool.invoke({"code": "print(word * 2)"}) == "ABAB\n"

    async def scenario() -> str:
        async with AsyncSluice(server.base_url, "key-a") as async_sluice:
            async_tool = sluice_tool([lookup], async_sluice=async_sluice)
            return str(await async_tool.ainvoke({"code": "print(await lookup(q='cd'))"}))

    assert asyncio.run(scenario()) == "CD\n"


def test_a_pydantic_ai_agent_calls_execute_python(server: Server) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from sluice_client.integrations.pydantic_ai_toolset import sluice_toolset

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returned = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
        if not returned:
            assert [t.name for t in info.function_tools] == ["execute_python"]
            code = "import asyncio\nwords = await asyncio.gather(lookup(q='x'), lookup(q='y'))\nprint('-'.join(words))"
            return ModelResponse(parts=[ToolCallPart("execute_python", {"code": code})])
        return ModelResponse(parts=[TextPart(f"the code said {returned[0].content!r}")])

    async def scenario() -> str:
        async with AsyncSluice(server.base_url, "key-b") as sluice:
            agent = Agent(FunctionModel(model), toolsets=[sluice_toolset([lookup], async_sluice=sluice)])
            return str((await agent.run("shout x and y")).output)

    assert asyncio.run(scenario()) == "the code said 'X-Y\\n'"


def test_smolagents_code_runs_in_sluice_with_its_tools_here(server: Server) -> None:
    from smolagents import tool
    from smolagents.default_tools import FinalAnswerTool
    from smolagents.local_python_executor import InterpreterError

    from sluice_client.integrations.smolagents_executor import SluiceExecutor

    calls: list[str] = []

    @tool
    def shout(q: str) -> str:
        """Shouts a word.

        Args:
            q: the word
        """
        calls.append(q)
        return q.upper()

    with Sluice(server.base_url, "key-a") as sluice:
        executor = SluiceExecutor(sluice)
        executor.send_tools({"shout": shout, "final_answer": FinalAnswerTool()})
        executor.send_variables({"suffix": "!"})
        step = executor("def twice(q):\n    return shout(q=q) * 2\nloud = twice('ab')\nprint('step one')\nloud")
        assert (step.output, step.logs, step.is_final_answer) == ("'ABAB'", "step one\n", False)
        joined = executor("print(', '.join(shout(q=w) for w in ['c', 'd']))")
        assert joined.logs == "C, D\n", "a generator over tool calls is consumed as a list"
        with pytest.raises(InterpreterError, match="lambda"):
            executor("f = lambda w: shout(q=w)")
        final = executor("final_answer({'answer': loud + suffix, 'n': len(loud)})")
        assert final.is_final_answer and final.output == {"answer": "ABAB!", "n": 4}
    assert calls == ["ab", "c", "d"]
