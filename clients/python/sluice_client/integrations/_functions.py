"""Host functions as Sluice client tools the script awaits by name: the shared core of the
integrations. A call pauses the script; the function runs here; the script resumes."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .._client import AsyncSluice, Sluice
from .._models import Execution

#: Marks the line of stdout that carries a script's value as JSON (the rest is its output).
RESULT_MARKER = "\x1esluice-result:"

#: A generic tool: positional and keyword arguments, as the host function takes them.
GENERIC_SCHEMA = {"type": "object", "properties": {"args": {"type": "array"}, "kwargs": {"type": "object"}}}


def host_tool(name: str, description: str = "") -> dict[str, Any]:
    return {
        "name": name,
        "description": description or f"the host function {name}",
        "input_schema": GENERIC_SCHEMA,
        "allowed_callers": ["code_execution_20260120"],
    }


def shim(name: str, tool: str) -> str:
    """Python that makes `name(*args, **kwargs)` an awaitable returning the host's value."""
    return (
        f"async def {name}(*args, **kwargs):\n"
        f"    import json as _json\n"
        f"    return _json.loads(await {tool}(args=list(args), kwargs=kwargs))\n"
    )


def split_result(execution: Execution) -> tuple[str, Any, bool]:
    """(output without the marker line, the marked value, whether there was one)."""
    stdout = execution.stdout
    output, marker, tail = stdout.rpartition(RESULT_MARKER)
    if not marker:
        return stdout, None, False
    value_line, _, after = tail.partition("\n")
    return output + after, json.loads(value_line), True


def _answer(value: Any) -> str:
    return json.dumps(value, default=str)


def _awaited(value: Any) -> Any:
    """A host function's value, run to completion if it is a coroutine (a sync caller)."""
    return asyncio.run(value) if inspect.iscoroutine(value) else value


def run_sync(
    sluice: Sluice, code: str, functions: Mapping[str, Callable[..., Any]], tools: list[dict[str, Any]], container: str | None
) -> Execution:
    """Runs `code`, answering calls of the generic tools with `functions`."""

    def call(function: Callable[..., Any]) -> Callable[..., str]:
        def invoke(args: list[Any] | None = None, kwargs: dict[str, Any] | None = None) -> str:
            return _answer(_awaited(function(*(args or []), **(kwargs or {}))))

        return invoke

    handlers = {name: call(function) for name, function in functions.items()}
    return sluice.run(code, tools=tools, handlers=handlers, container=container)


async def run_async(
    sluice: AsyncSluice,
    code: str,
    functions: Mapping[str, Callable[..., Any]],
    tools: list[dict[str, Any]],
    container: str | None,
    limits: Mapping[str, int] | None = None,
) -> Execution:
    """As `run_sync`, for coroutine functions too."""

    def call(function: Callable[..., Any]) -> Callable[..., Awaitable[str]]:
        async def invoke(args: list[Any] | None = None, kwargs: dict[str, Any] | None = None) -> str:
            value = function(*(args or []), **(kwargs or {}))
            if inspect.isawaitable(value):
                value = await value
            return _answer(value)

        return invoke

    handlers = {name: call(function) for name, function in functions.items()}
    return await sluice.run(code, tools=tools, handlers=handlers, container=container, limits=limits)


def failure(execution: Execution) -> str | None:
    """Why an execution did not succeed (a limit, or an uncaught exception), if it did not,
    with what it printed before (the model needs both)."""
    why = None
    if execution.error:
        why = f"{execution.error.type}: {execution.error.message}"
    elif execution.result and execution.result.return_code != 0:
        why = execution.result.stderr.strip() or f"return code {execution.result.return_code}"
    if why is None:
        return None
    printed, _, _ = split_result(execution)
    return f"{why}\nPrinted before the error:\n{printed}" if printed.strip() else why
