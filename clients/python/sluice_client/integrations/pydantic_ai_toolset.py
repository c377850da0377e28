"""Sluice as a Pydantic AI toolset: `Agent(model, toolsets=[sluice_toolset([get_orders, ...])])`
gives the agent `execute_python`, whose code can call your functions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic_ai import FunctionToolset

from .._client import AsyncSluice
from ..messages_loop import PythonTool
from ._code_tool import CodeTool


def sluice_toolset(
    functions: Sequence[Callable[..., Any] | PythonTool] = (),
    *,
    async_sluice: AsyncSluice | None = None,
    name: str = "execute_python",
) -> FunctionToolset[Any]:
    code_tool = CodeTool(functions, async_sluice=async_sluice)

    async def execute_python(code: str) -> str:
        return await code_tool.arun(code)

    toolset: FunctionToolset[Any] = FunctionToolset()
    # One container: the model's calls take turns rather than meet a busy container.
    toolset.add_function(
        execute_python, name=name, description=code_tool.description, takes_ctx=False, sequential=True
    )
    return toolset
