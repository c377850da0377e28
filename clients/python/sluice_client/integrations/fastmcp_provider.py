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
from ._functions import RESULT_MARKER, failure, host_tool, run_async, shim, split_result

_MAIN = "_sluice_codemode_main"


def wrap(code: str, inputs: dict[str, Any], functions: list[str]) -> str:
    """The code as the body of an async function (so `return` works), after the inputs and the
    shims of the host functions; its value is printed, marked, as JSON."""
    body = ast.parse(code).body or [ast.Pass()]
    main = ast.AsyncFunctionDef(
        name=_MAIN,
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=body,
        decorator_list=[],
        returns=None,
    )
    if "type_params" in ast.AsyncFunctionDef._fields:  # Python 3.12+
        setattr(main, "type_params", [])
    module = ast.fix_missing_locations(ast.Module(body=[main], type_ignores=[]))
    lines = ["import json as _json"]
    lines += [f"{name} = _json.loads({json.dumps(json.dumps(value))})" for name, value in inputs.items()]
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
        execution = await run_async(self.sluice, script, host, tools, None)
        why = failure(execution)
        if why:
            raise RuntimeError(why)
        _, value, _ = split_result(execution)
        return value
