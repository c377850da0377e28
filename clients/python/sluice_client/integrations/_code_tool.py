"""`execute_python` over a Sluice container, with your functions callable from the code: the
tool the LangChain and Pydantic AI integrations wrap. The container is kept between calls, so
the model's variables persist."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._client import AsyncSluice, Sluice
from ..messages_loop import PythonTool, _output, python_tool


def describe(tools: Sequence[PythonTool]) -> str:
    listed = "\n".join(tool.signature() for tool in tools)
    return (
        "Run Python in a persistent sandbox (variables survive between calls). These async functions are in "
        "its globals; await them, several at once with asyncio.gather. Their results stay inside: only what "
        "the code prints comes back." + (f"\n{listed}" if listed else "")
    )


class CodeTool:
    """Runs code in one Sluice container, answering calls with the given functions."""

    def __init__(
        self,
        functions: Sequence[Callable[..., Any] | PythonTool] = (),
        *,
        sluice: Sluice | None = None,
        async_sluice: AsyncSluice | None = None,
    ) -> None:
        self.tools = [f if isinstance(f, PythonTool) else python_tool(f) for f in functions]
        self.sluice = sluice
        self.async_sluice = async_sluice
        self.container: str | None = None
        self.description = describe(self.tools)

    def run(self, code: str) -> str:
        sluice = self.sluice or Sluice()
        execution = sluice.run(
            code,
            container=self.container,
            tools=[t.definition() for t in self.tools],
            handlers={t.name: t.function for t in self.tools},
        )
        self.container = execution.container.id
        return _output(execution)

    async def arun(self, code: str) -> str:
        sluice = self.async_sluice or AsyncSluice()
        execution = await sluice.run(
            code,
            container=self.container,
            tools=[t.definition() for t in self.tools],
            handlers={t.name: t.function for t in self.tools},
        )
        self.container = execution.container.id
        return _output(execution)
