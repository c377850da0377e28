"""Programmatic tool calling for an Anthropic Messages loop, with Sluice running the code.

The model gets one tool, `execute_python`, whose description lists your Python functions as
async signatures. When it calls it, the code runs in a Sluice container (kept across turns,
so variables persist); each call the script makes to one of your functions pauses it, the
function runs here, and the script resumes with the result. Only what the script prints goes
back to the model: the raw tool results stay in the sandbox.

    agent = CodeExecutionAgent(anthropic.Anthropic(), Sluice(), model="claude-...",
                               tools=[python_tool(get_orders), python_tool(get_customer)])
    answer = agent.run("Which customers spent the most in March?")
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._client import Sluice
from ._errors import ContainerExpiredError, NotFoundError, SluiceError
from ._models import Execution

CODE_TOOL_NAME = "execute_python"
#: Turns the loop takes before it gives up (a model that never stops calling tools).
DEFAULT_MAX_TURNS = 20

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}
_PY_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "array": "list", "object": "dict"}


@dataclass
class PythonTool:
    """One of your functions, as the script calls it (by keyword)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    function: Callable[..., Any]

    def definition(self) -> dict[str, Any]:
        """The Sluice tool definition: a client tool only code may call."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "allowed_callers": ["code_execution_20260120"],
        }

    def signature(self) -> str:
        properties: dict[str, Any] = self.input_schema.get("properties", {})
        required = set(self.input_schema.get("required", []))
        params = [
            f"{name}: {_PY_TYPES.get(spec.get('type', ''), 'Any')}" + ("" if name in required else " = None")
            for name, spec in properties.items()
        ]
        keyword = f"*, {', '.join(params)}" if params else ""
        return f"async def {self.name}({keyword}) -> str  # {self.description}"


def python_tool(function: Callable[..., Any], description: str | None = None) -> PythonTool:
    """A `PythonTool` from a function: its name, its docstring, and a schema from its
    annotated parameters (those without a default are required)."""
    schema: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
    try:
        hints = typing.get_type_hints(function)
    except (NameError, TypeError):  # an annotation that names what is not importable here
        hints = {}
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue  # tools are called by keyword: `*args` and `**kwargs` take nothing
        annotation = hints.get(name, parameter.annotation)
        kind = _JSON_TYPES.get(annotation) or _JSON_TYPES.get(getattr(annotation, "__origin__", None))
        schema["properties"][name] = {"type": kind} if kind else {}
        if parameter.default is inspect.Parameter.empty:
            schema["required"].append(name)
    text = description or inspect.getdoc(function) or function.__name__
    return PythonTool(function.__name__, text.strip().splitlines()[0], schema, function)


class _Messages(Protocol):
    def create(self, **kwargs: Any) -> Any: ...


class MessagesClient(Protocol):
    """What the loop needs of `anthropic.Anthropic()` (a scripted stand-in works too)."""

    @property
    def messages(self) -> _Messages: ...


@dataclass
class AgentResult:
    """The model's last answer and what the code kept out of its context."""

    text: str
    turns: int
    executions: list[Execution] = field(default_factory=list)

    @property
    def tool_result_bytes(self) -> int:
        """Bytes of tool results that stayed inside the sandbox."""
        return sum(e.usage.tool_result_bytes for e in self.executions)

    @property
    def returned_bytes(self) -> int:
        """Bytes the scripts returned to the model."""
        return sum(e.usage.returned_bytes for e in self.executions)


def _output(execution: Execution) -> str:
    """What the model reads of an execution: its output, and why it failed if it did."""
    parts = []
    if execution.result:
        parts.append(execution.result.stdout)
        if execution.result.value_repr:
            parts.append(execution.result.value_repr)
        if execution.result.stderr:
            parts.append(f"[stderr]\n{execution.result.stderr}")
    if execution.error:
        parts.append(f"[stopped: {execution.error.type}] {execution.error.message}")
    return "\n".join(p for p in parts if p) or "(no output)"


class CodeExecutionAgent:
    """An Anthropic Messages loop whose model writes Python that Sluice runs."""

    def __init__(
        self,
        client: MessagesClient,
        sluice: Sluice,
        *,
        model: str,
        tools: Sequence[PythonTool],
        system: str | None = None,
        max_tokens: int = 4096,
        max_turns: int = DEFAULT_MAX_TURNS,
    ) -> None:
        self.client = client
        self.sluice = sluice
        self.model = model
        self.tools = list(tools)
        self.system = system
        self.max_tokens = max_tokens
        self.max_turns = max_turns
        self.container: str | None = None

    def code_tool(self) -> dict[str, Any]:
        """`execute_python` as the model sees it, with your functions' signatures."""
        listed = "\n".join(tool.signature() for tool in self.tools)
        return {
            "name": CODE_TOOL_NAME,
            "description": "Run Python in a persistent sandbox; variables survive between calls. These async "
            "functions are in its globals (await them, several at once with asyncio.gather); their results "
            "stay inside, only what you print comes back:\n" + listed,
            "input_schema": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
        }

    def execute(self, code: str) -> Execution:
        """Runs one piece of the model's code, answering its calls with your functions. A
        container that expired (or was deleted) is replaced: the caller says so to the model."""
        execution = self.sluice.run(
            code,
            container=self.container,
            tools=[tool.definition() for tool in self.tools],
            handlers={tool.name: tool.function for tool in self.tools},
        )
        self.container = execution.container.id
        return execution

    def run(self, prompt: str) -> AgentResult:
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        result = AgentResult(text="", turns=0)
        while result.turns < self.max_turns:
            result.turns += 1
            request: dict[str, Any] = {
                "model": self.model,
                "max_tokens": self.max_tokens,
                "tools": [self.code_tool()],
                "messages": messages,
            }
            if self.system:
                request["system"] = self.system
            response = self.client.messages.create(**request)
            content = [block.model_dump(exclude_none=True) for block in response.content]
            messages.append({"role": "assistant", "content": content})
            result.text = "".join(block.get("text", "") for block in content if block.get("type") == "text")
            calls = [block for block in content if block.get("type") == "tool_use"]
            if response.stop_reason != "tool_use" or not calls:
                return result
            answers = []
            for call in calls:
                if call["name"] != CODE_TOOL_NAME:
                    answers.append(_error_result(call["id"], f"there is no tool named {call['name']!r}"))
                    continue
                try:
                    execution = self.execute(str(call["input"].get("code", "")))
                except (ContainerExpiredError, NotFoundError) as gone:
                    self.container = None
                    message = f"the sandbox's state was lost ({gone.code}); variables must be set again"
                    answers.append(_error_result(call["id"], message))
                    continue
                except SluiceError as refused:
                    answers.append(_error_result(call["id"], f"{refused.code or refused.type}: {refused.message}"))
                    continue
                result.executions.append(execution)
                failed = execution.status == "failed"
                answers.append({"type": "tool_result", "tool_use_id": call["id"], "content": _output(execution), "is_error": failed})
            messages.append({"role": "user", "content": answers})
        raise RuntimeError(f"the model was still calling tools after {self.max_turns} turns")


def _error_result(tool_use_id: str, message: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": json.dumps({"error": message}), "is_error": True}
