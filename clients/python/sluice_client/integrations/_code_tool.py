"""`execute_python` over a Sluice container, with your functions callable from the code: the
tool the LangChain and Pydantic AI integrations wrap. The container is kept between calls, so
the model's variables persist."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import Any

from .._client import AsyncSluice, Sluice
from .._errors import ContainerExpiredError, NotFoundError, SluiceError
from .._models import Execution
from ..messages_loop import PythonTool, _output, python_tool


def describe(tools: Sequence[PythonTool]) -> str:
    listed = "\n".join(tool.signature() for tool in tools)
    return (
        "Run Python in a persistent sandbox (variables survive between calls). These async functions are in "
        "its globals; await them, several at once with asyncio.gather. Their results stay inside: only what "
        "the code prints comes back." + (f"\n{listed}" if listed else "")
    )


class CodeTool:
    """Runs code in one Sluice container, answering calls with the given functions. Calls take
    turns (a framework that runs tool calls in parallel would otherwise meet a busy container);
    a container that expired is replaced, and the answer says the state was lost."""

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
        self._turn = threading.Lock()
        self._async_turn: asyncio.Lock | None = None

    def _request(self) -> dict[str, Any]:
        return {
            "container": self.container,
            "tools": [t.definition() for t in self.tools],
            "handlers": {t.name: t.function for t in self.tools},
        }

    def _answer(self, execution: Execution | None, lost: SluiceError | None) -> str:
        if lost is not None:
            self.container = None
            return f"the sandbox's state was lost ({lost.code}); run the code that sets it up again"
        assert execution is not None
        self.container = execution.container.id
        return _output(execution)

    def run(self, code: str) -> str:
        with self._turn:
            if self.sluice is None:
                self.sluice = Sluice()
            try:
                return self._answer(self.sluice.run(code, **self._request()), None)
            except (ContainerExpiredError, NotFoundError) as lost:
                return self._answer(None, lost)

    async def arun(self, code: str) -> str:
        if self._async_turn is None:
            self._async_turn = asyncio.Lock()
        async with self._async_turn:
            if self.async_sluice is None:
                self.async_sluice = AsyncSluice()
            try:
                return self._answer(await self.async_sluice.run(code, **self._request()), None)
            except (ContainerExpiredError, NotFoundError) as lost:
                return self._answer(None, lost)
