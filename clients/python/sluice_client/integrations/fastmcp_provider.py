"""Sluice as FastMCP CodeMode's sandbox: `CodeMode(sandbox_provider=SluiceSandboxProvider(...))`.

CodeMode's `execute` tool hands the provider the model's code (which ends with `return`) and
`call_tool`; the code runs in a fresh Sluice container, each `await call_tool(...)` pausing it
while FastMCP calls the tool here, and the returned value comes back as CodeMode expects."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from typing import Any

from .._client import AsyncSluice
from .._errors import SluiceError
from ._functions import RESULT_MARKER, failure, host_tool, run_async, shim, split_result

_MAIN = "_sluice_codemode_main"


def wrap(code: str, inputs: dict[str, Any], functions: list[str]) -> str:
    """The code as the body of an async function (so `return` works) whose keyword parameters
    are the inputs (so the code may rebind them), after the shims of the host functions; its
    value is printed, marked, as JSON."""
    defaults = ", ".join(f"{name}=_json.loads({json.dumps(json.dumps(value))})" for name, value in inputs.items())
    signature = f"*, {defaults}" if defaults else ""
    template = ast.parse(f"async def {_MAIN}({signature}):\n    pass").body[0]
    assert isinstance(template, ast.AsyncFunctionDef)
    template.body = ast.parse(code).body or [ast.Pass()]
    module = ast.fix_missing_locations(ast.Module(body=[template], type_ignores=[]))
    lines = ["import json as _json"]
    lines += [shim(name, f"_host_{name}") for name in functions]
    lines.append(ast.unparse(module))
    lines.append(f"print({RESULT_MARKER!r} + _json.dumps(await {_MAIN}(), default=str))")
    return "\n".join(lines)


class SluiceSandboxProvider:
    """FastMCP's `SandboxProvider`, backed by a Sluice service."""

    def __init__(self, sluice: AsyncSluice, *, limits: dict[str, int] | None = None) -> None:
        self.sluice = sluice
        self.limits = limits

    async def run(
        self,
        code: str,
        *,
        inputs: dict[str, Any] | None = None,
        external_functions: dict[str, Callable[..., Any]] | None = None,
    ) -> Any:
        functions = dict(external_functions or {})
        script = wrap(code, dict(inputs or {}), list(functions))
        tools = [host_tool(f"_host_{name}") for name in functions]
        host = {f"_host_{name}": function for name, function in functions.items()}
        execution = await run_async(self.sluice, script, host, tools, None, self.limits)
        # Each run has a container of its own (CodeMode keeps no state between runs).
        try:
            await self.sluice.delete_container(execution.container.id)
        except SluiceError:
            pass
        why = failure(execution)
        if why:
            raise RuntimeError(why)
        _, value, _ = split_result(execution)
        return value
