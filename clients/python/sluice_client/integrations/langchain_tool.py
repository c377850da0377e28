"""Sluice as a LangChain tool: `sluice_tool([get_orders, ...], sluice=Sluice())` is a
`StructuredTool` named `execute_python` that any LangChain or LangGraph agent can call."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from .._client import AsyncSluice, Sluice
from ..messages_loop import PythonTool
from ._code_tool import CodeTool


class _CodeInput(BaseModel):
    code: str = Field(description="The Python to run.")


def sluice_tool(
    functions: Sequence[Callable[..., Any] | PythonTool] = (),
    *,
    sluice: Sluice | None = None,
    async_sluice: AsyncSluice | None = None,
    name: str = "execute_python",
) -> StructuredTool:
    code_tool = CodeTool(functions, sluice=sluice, async_sluice=async_sluice)
    return StructuredTool.from_function(
        func=code_tool.run,
        coroutine=code_tool.arun,
        name=name,
        description=code_tool.description,
        args_schema=_CodeInput,
    )
