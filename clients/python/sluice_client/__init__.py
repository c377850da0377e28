"""Sluice's Python client: `Sluice` and `AsyncSluice` over the whole HTTP API, errors as
exceptions with Sluice's stable codes, and `CodeExecutionAgent`, an Anthropic Messages loop
whose model writes Python that Sluice runs."""

from ._client import AsyncSluice, Sluice
from ._errors import (
    AuthenticationError,
    ConflictError,
    APIConnectionError,
    ContainerExpiredError,
    InternalError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    RateLimitError,
    RequestTooLargeError,
    SluiceError,
)
from ._models import (
    ApprovalRequest,
    CodeExecutionResult,
    Container,
    Execution,
    ExecutionSummary,
    Health,
    Preview,
    PreviewTool,
    Replay,
    ToolUse,
    Usage,
)
from .messages_loop import AgentResult, CodeExecutionAgent, PythonTool, python_tool

__all__ = [
    "AgentResult",
    "ApprovalRequest",
    "AsyncSluice",
    "AuthenticationError",
    "CodeExecutionAgent",
    "CodeExecutionResult",
    "ConflictError",
    "APIConnectionError",
    "Container",
    "ContainerExpiredError",
    "Execution",
    "ExecutionSummary",
    "Health",
    "InternalError",
    "InvalidRequestError",
    "NotFoundError",
    "OverloadedError",
    "Preview",
    "PreviewTool",
    "PythonTool",
    "RateLimitError",
    "Replay",
    "RequestTooLargeError",
    "Sluice",
    "SluiceError",
    "ToolUse",
    "Usage",
    "python_tool",
]
