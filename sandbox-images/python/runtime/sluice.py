"""What a Sluice script may use from inside the sandbox.

Tool failures arrive as the exceptions below; `count` records named intermediate figures
that are returned with the execution. Nothing here reaches outside the sandbox: the host
decides what a tool call does.
"""

__all__ = [
    "ToolDeniedError",
    "ToolError",
    "ToolInputError",
    "ToolNotAllowedError",
    "ToolTimeoutError",
    "ToolUnavailableError",
    "call_tool",
    "count",
    "counts",
    "search_tools",
]


class ToolError(Exception):
    """A tool call failed; `code` is a stable name, `details` a dict with more."""

    def __init__(self, message="", code="tool_error", details=None):
        super().__init__(message)
        self.message = str(message)
        self.code = code
        self.details = dict(details or {})

    def __str__(self):
        return self.message


class ToolInputError(ToolError):
    """The arguments did not match the tool's input_schema (`details['pointer']`)."""


class ToolNotAllowedError(ToolError):
    """The tool may not be called from code here, or its quota is spent."""


class ToolTimeoutError(ToolError, TimeoutError):
    """No answer in time; the tool may still have acted."""

    def __new__(cls, message="", code="timeout", details=None):
        # OSError would read (message, code) as (errno, strerror): give it the message only.
        return super().__new__(cls, message)


class ToolUnavailableError(ToolError):
    """The tool could not be reached, after the retries the host already made."""


class ToolDeniedError(ToolError):
    """The call was not approved (`code` is `denied`, or `approval_timeout` when nobody
    answered in time); the tool did not run. `details` may hold who decided and why."""


_ERRORS_BY_CODE = {
    "denied": ToolDeniedError,
    "approval_timeout": ToolDeniedError,
    "invalid_input": ToolInputError,
    "not_allowed": ToolNotAllowedError,
    "unknown_tool": ToolNotAllowedError,
    "quota_exceeded": ToolNotAllowedError,
    "timeout": ToolTimeoutError,
    "unavailable": ToolUnavailableError,
}


def _error_from_host(error):
    """Builds the exception for an error result the host sent."""
    code = str(error.get("code") or "tool_error")
    cls = _ERRORS_BY_CODE.get(code, ToolError)
    return cls(str(error.get("message") or code), code, error.get("details"))


_counts = {}


def count(name, n=1):
    """Adds `n` to the named count of this execution and returns the new total."""
    if not isinstance(name, str) or not name:
        raise TypeError("count name must be a non-empty str")
    if isinstance(n, bool) or not isinstance(n, (int, float)):
        raise TypeError("count value must be an int or float")
    total = _counts.get(name, 0) + n
    _counts[name] = total
    return total


def counts():
    """The counts recorded so far in this execution."""
    return dict(_counts)


async def call_tool(name, input=None, **kwargs):
    """Calls a tool by name; the same as awaiting the tool's own function."""
    import _sluice_tools

    args = () if input is None else (input,)
    return await _sluice_tools.call_tool(name, _sluice_tools.bind_input(name, (), args, kwargs))


async def search_tools(query=None, *, pattern=None, limit=5):
    """Finds the tools this script may call: by `query` (what the tool should do, in words)
    or by `pattern` (a case-insensitive regular expression over names, descriptions and
    parameters). Returns up to `limit` dicts, best first, each with the tool's `name`, the
    `signature` to call it by and its `description`. Tools are already globals: call a found
    one by its name.
    """
    import json

    from _sluice_abi import dumps
    import _sluice_tools

    arguments = {"limit": limit}
    if query is not None:
        arguments["query"] = query
    if pattern is not None:
        arguments["pattern"] = pattern
    try:
        arguments_json = dumps(arguments)
    except ValueError as exc:
        raise TypeError(f"search_tools() arguments must be JSON data: {exc}") from None
    return json.loads(await _sluice_tools.call_tool("sluice.search_tools", arguments_json))
