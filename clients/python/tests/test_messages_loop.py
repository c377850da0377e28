"""The Anthropic Messages loop against a live server, with a scripted model that answers in
the `anthropic` SDK's own types (no network)."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

from conftest import Server

from sluice_client import CodeExecutionAgent, Sluice, python_tool

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "agent.py"


def load_example():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("agent_example", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["agent_example"] = module
    spec.loader.exec_module(module)
    return module


def test_the_example_agent_answers_and_keeps_tool_results_inside(server: Server) -> None:
    example = load_example()
    with Sluice(server.base_url, "key-a") as sluice:
        tools = [python_tool(example.get_orders), python_tool(example.get_customer)]
        model = example.ScriptedModel()
        agent = CodeExecutionAgent(model, sluice, model="scripted", tools=tools)
        result = agent.run("Which three customers spent the most in March?")
        assert agent.container is not None
        inside, returned = example.tokens(sluice, {e.id for e in result.executions}, agent.container)
    assert returned > 0 and inside > 100 * returned, (inside, returned)
    assert result.turns == 2 and model.turn == 2
    lines = result.text.splitlines()
    assert lines[0] == "The top spenders in March:" and len(lines) == 4, result.text
    spent: dict[str, float] = {}
    for order in example.ORDERS:
        spent[order["customer"]] = spent.get(order["customer"], 0) + order["total"]
    best = max(spent, key=lambda c: spent[c])
    assert lines[1] == f"{example.CUSTOMERS[best]['name']} {round(spent[best], 2)}"
    assert result.tool_result_bytes > 100 * result.returned_bytes, (result.tool_result_bytes, result.returned_bytes)


def test_signatures_come_from_the_functions() -> None:
    def find(name: str, limit: int = 5) -> str:
        """Finds people by name."""
        return name

    def tagged(query: str, *tags: str, **options: int) -> str:
        return query

    assert python_tool(tagged).input_schema["required"] == ["query"], "variadic parameters take nothing by keyword"
    tool = python_tool(find)
    assert tool.input_schema == {
        "type": "object",
        "properties": {"name": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["name"],
    }
    assert tool.signature() == "async def find(*, name: str, limit: int = None) -> str  # Finds people by name."
