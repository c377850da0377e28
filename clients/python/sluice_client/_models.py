"""What Sluice answers, as pydantic models (unknown fields are kept, so a newer server's
additions reach the caller)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class ContainerRef(_Model):
    id: str
    expires_at: str


class Caller(_Model):
    type: str
    tool_id: str


class ToolUse(_Model):
    """A client tool call the script is waiting on: answer it with a tool result."""

    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]
    caller: Caller


class ApprovalRequest(_Model):
    """A call held until a person approves or denies it (`Sluice.approve`, `Sluice.deny`)."""

    type: Literal["approval_request"]
    id: str
    tool_use_id: str
    name: str
    input: dict[str, Any]
    caller: Caller
    side_effects: str
    executor: str
    reason: str | None = None
    rule: int | None = None
    call_number: int
    calls_so_far: dict[str, int] = {}
    expires_at: str


class CodeExecutionResult(_Model):
    type: Literal["code_execution_result"]
    stdout: str
    stderr: str
    return_code: int
    content: list[Any] = []
    value_repr: str | None = None


class ExecutionError(_Model):
    type: str
    message: str


class ServerToolUse(_Model):
    code_execution_requests: int = 0
    web_search_requests: int = 0
    web_fetch_requests: int = 0


class Usage(_Model):
    tool_calls: int
    tool_result_bytes: int
    returned_bytes: int
    time_ms: int
    server_tool_use: ServerToolUse | None = None


class Execution(_Model):
    """An execution: `completed`, `failed`, or `requires_action` with `tool_uses` to answer
    and `approval_requests` to decide."""

    id: str
    type: Literal["execution"]
    container: ContainerRef
    status: Literal["completed", "failed", "requires_action", "running"]
    tool_uses: list[ToolUse] = []
    approval_requests: list[ApprovalRequest] = []
    result: CodeExecutionResult | None = None
    error: ExecutionError | None = None
    code_execution_tool_result: dict[str, Any] | None = None
    counts: dict[str, float] = {}
    usage: Usage
    created_at: str
    code: str | None = None
    ledger: list[dict[str, Any]] | None = None

    @property
    def stdout(self) -> str:
        return self.result.stdout if self.result else ""


class Container(_Model):
    id: str
    type: Literal["container"]
    created_at: str
    expires_at: str
    state: str
    executions: int


class ExecutionSummary(_Model):
    """One row of the audit trail's executions index."""

    id: str
    container_id: str
    number: int
    status: str
    outcome: str | None = None
    return_code: int | None = None
    started_at: int
    finished_at: int | None = None
    tools: list[str] = []
    tool_result_tokens: int | None = None
    returned_tokens: int | None = None


class Replay(_Model):
    execution_id: str
    result: Literal["identical", "diverged"]
    divergence: str | None = None
    executions_replayed: int
    elapsed_ms: float


class PreviewTool(_Model):
    name: str
    executor: str
    side_effects: str
    callable_from_code: bool
    approval: Literal["not_required", "required", "denied", "depends"]
    lines: list[int] = []


class Preview(_Model):
    """The tools a script's code names, and whether calls to them would need approval."""

    type: Literal["execution_preview"]
    tools: list[PreviewTool]
    complete: bool
    notes: list[str] = []


class Health(_Model):
    status: str
    image: str
