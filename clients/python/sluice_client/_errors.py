"""Sluice's errors as exceptions: one class per stable code, each carrying the HTTP status,
Anthropic's error type, Sluice's code and the request id."""

from __future__ import annotations

from typing import Any


class SluiceError(Exception):
    """Any error Sluice answered with (or could not be reached for)."""

    status: int
    type: str
    code: str
    request_id: str | None

    def __init__(self, message: str, *, status: int = 0, type: str = "", code: str = "", request_id: str | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = type
        self.code = code
        self.request_id = request_id

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status}, code={self.code!r})"


class APIConnectionError(SluiceError):
    """The service could not be reached (after the retries that were safe to make)."""


class InvalidRequestError(SluiceError):
    """400: the request is malformed or names something wrong."""


class AuthenticationError(SluiceError):
    """401: no valid API key."""


class NotFoundError(SluiceError):
    """404: no such execution, container or tool for this key."""


class ConflictError(SluiceError):
    """409: the container or execution is busy, or not in that state; safe to retry."""


class ContainerExpiredError(SluiceError):
    """410: the container expired (or its saved state was refused)."""


class RequestTooLargeError(SluiceError):
    """413."""


class RateLimitError(SluiceError):
    """429: a quota of this key is used up; retried when it frees."""


class OverloadedError(SluiceError):
    """529: the node has no room now; retried."""


class InternalError(SluiceError):
    """500: the service failed; the cause is in its log under the request id."""


_BY_CODE: dict[str, type[SluiceError]] = {
    "invalid_request": InvalidRequestError,
    "invalid_tool_input": InvalidRequestError,
    "method_not_allowed": InvalidRequestError,
    "authentication": AuthenticationError,
    "not_found": NotFoundError,
    "conflict": ConflictError,
    "container_expired": ContainerExpiredError,
    "container_unrestorable": ContainerExpiredError,
    "request_too_large": RequestTooLargeError,
    "rate_limit": RateLimitError,
    "overloaded": OverloadedError,
    "internal": InternalError,
}


def error_from(status: int, body: Any, request_id: str | None) -> SluiceError:
    """The exception for an error answer (Anthropic's shape, Sluice's `code` inside)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):  # not Sluice's shape (a proxy's page, say)
        error = {"message": str(error or body or f"HTTP {status}")}
    code = str(error.get("code", ""))
    message = str(error.get("message", f"HTTP {status}"))
    cls = _BY_CODE.get(code, InternalError if status >= 500 else InvalidRequestError)
    rid = body.get("request_id") if isinstance(body, dict) else None
    return cls(message, status=status, type=str(error.get("type", "")), code=code, request_id=rid or request_id)
