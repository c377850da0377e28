"""Sluice as smolagents' code executor: `CodeAgent(tools, model, executor=SluiceExecutor(Sluice()))`.

smolagents' code calls tools synchronously (`x = web_search(query=...)`) and ends with
`final_answer(...)`. In Sluice tools are async host calls, so the code is rewritten before it
is sent: a call of a tool gets an `await` (and a function that makes one becomes `async`, its
own calls awaited in turn); `final_answer` ends the step with its value. The tools run here,
in this process; the agent's variables persist in one container from step to step."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from smolagents.local_python_executor import (  # type: ignore[import-untyped]
    CodeOutput,
    InterpreterError,
    PythonExecutor,
)

from .._client import Sluice
from ._functions import RESULT_MARKER, failure, host_tool, run_sync, shim, split_result

_FINAL = "_SluiceFinalAnswer"
_PRELUDE = f"""
import json as _json
class {_FINAL}(BaseException):
    pass
def final_answer(answer):
    raise {_FINAL}(answer)
"""


class _AwaitCalls(ast.NodeTransformer):
    """Awaits every call of a name in `awaited`; notes the functions that now await."""

    def __init__(self, awaited: set[str]) -> None:
        self.awaited = awaited
        self.became_async: set[str] = set()
        self._function: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self._function.append(node.name)
        self.generic_visit(node)
        self._function.pop()
        if node.name in self.became_async:
            fields: dict[str, Any] = {field: getattr(node, field, None) for field in node._fields}
            return ast.copy_location(ast.AsyncFunctionDef(**fields), node)
        return node

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        self._function.append(node.name)
        self.generic_visit(node)
        self._function.pop()
        return node

    def _awaits(self, call: ast.Call) -> bool:
        if isinstance(call.func, ast.Name) and call.func.id in self.awaited:
            if self._function:
                self.became_async.add(self._function[-1])
            return True
        return False

    def visit_Await(self, node: ast.Await) -> ast.AST:
        # Awaited already (an earlier round, or the model's own `await`): not wrapped twice.
        if isinstance(node.value, ast.Call):
            self.generic_visit(node.value)
            self._awaits(node.value)
            return node
        self.generic_visit(node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        return ast.Await(value=node) if self._awaits(node) else node

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> ast.AST:
        # `", ".join(search(q) for q in qs)`: with an await inside it would be an async
        # generator; a list gives the consumer the same items.
        self.generic_visit(node)
        if any(isinstance(inner, ast.Await) for inner in ast.walk(node)):
            return ast.copy_location(ast.ListComp(elt=node.elt, generators=node.generators), node)
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in self.awaited for n in ast.walk(node)):
            raise InterpreterError("a tool cannot be called inside a lambda here: use a def")
        self.generic_visit(node)
        return node


def rewrite(code: str, tools: set[str]) -> str:
    """Awaits tool calls, to a fixed point (an async function's callers await it too); the
    step's body runs inside a `try` that turns `final_answer` into a marked value."""
    tree = ast.parse(code)
    awaited = set(tools)
    while True:
        transformer = _AwaitCalls(awaited)
        tree = transformer.visit(tree)
        if transformer.became_async <= awaited:
            break
        awaited |= transformer.became_async
    step = ast.parse(
        f"_sluice_last = None\n"
        f"try:\n    pass\nexcept {_FINAL} as _final:\n    print({RESULT_MARKER!r} + _json.dumps(_final.args[0], default=str))\n"
        f"_sluice_last"
    )
    handler = step.body[1]
    assert isinstance(handler, ast.Try)
    body = tree.body or [ast.Pass()]
    # The step's last expression is its output, as smolagents' own executor gives it: kept,
    # and shown after the `try` (where Sluice reports a trailing expression's value).
    if isinstance(body[-1], ast.Expr):
        last = ast.Name(id="_sluice_last", ctx=ast.Store())
        body[-1] = ast.copy_location(ast.Assign(targets=[last], value=body[-1].value), body[-1])
    handler.body = body
    return ast.unparse(ast.fix_missing_locations(step))


class SluiceExecutor(PythonExecutor):  # type: ignore[misc]
    """smolagents' `PythonExecutor`, backed by a Sluice container."""

    def __init__(self, sluice: Sluice) -> None:
        self.sluice = sluice
        self.container: str | None = None
        self.tools: dict[str, Callable[..., Any]] = {}

    def send_tools(self, tools: dict[str, Any]) -> None:
        self.tools = {name: tool for name, tool in tools.items() if name != "final_answer"}
        shims = "\n".join(shim(name, f"_host_{name}") for name in self.tools)
        self._run(_PRELUDE + "\n" + shims)

    def send_variables(self, variables: dict[str, Any]) -> None:
        if variables:
            import json

            self._run(f"import json as _json\nglobals().update(_json.loads({json.dumps(json.dumps(variables, default=str))}))")

    def _run(self, code: str) -> tuple[str, Any, bool]:
        tools = [host_tool(f"_host_{name}") for name in self.tools]
        functions = {f"_host_{name}": tool for name, tool in self.tools.items()}
        execution = run_sync(self.sluice, code, functions, tools, self.container)
        self.container = execution.container.id
        why = failure(execution)
        if why:
            raise InterpreterError(why)
        logs, value, final = split_result(execution)
        if not final and execution.result and execution.result.value_repr is not None:
            value = execution.result.value_repr
        return logs, value, final

    def __call__(self, code_action: str) -> CodeOutput:
        logs, value, final = self._run(rewrite(code_action, set(self.tools)))
        return CodeOutput(output=value, logs=logs, is_final_answer=final)
