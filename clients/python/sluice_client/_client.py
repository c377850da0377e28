"""The clients: `Sluice` (sync) and `AsyncSluice`, over the whole HTTP API.

Both build the same requests (`_Request`) and read answers the same way (`_read`); only the
transport differs. Retries are made only where they cannot run anything twice: a 429 or 529
(the request was refused before it ran), a 409 on a busy container, and a connection that
failed before the request was sent, or of a read-only request.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from ._errors import APIConnectionError, ConflictError, InvalidRequestError, SluiceError, error_from
from ._models import ApprovalRequest, Container, Execution, ExecutionSummary, Health, Preview, Replay

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT = 600.0
DEFAULT_MAX_RETRIES = 2
#: Time to set up a connection (an unreachable host fails fast; a long execution does not).
CONNECT_TIMEOUT = 10.0
#: First wait before a retry; doubled each time, with jitter, unless the server says when.
RETRY_BACKOFF = 0.25
#: The longest a `retry-after` is honoured.
MAX_RETRY_WAIT = 30.0
#: Statuses a request is retried on: refused before anything ran.
RETRYABLE_STATUSES = frozenset({409, 429, 529})

M = TypeVar("M", bound=BaseModel)
ToolResult = Mapping[str, Any]
#: Decides a held call in `run`: True approves, False denies, a string denies with that reason.
Approver = Callable[[ApprovalRequest], "bool | str"]


@dataclass
class _Request:
    method: str
    path: str
    json: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)
    # A POST that only reads (a search) is as safe to send again as a GET.
    reads_only: bool = False

    @property
    def read_only(self) -> bool:
        return self.reads_only or self.method in ("GET", "HEAD")


def _drop_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def _read(response: httpx.Response) -> Any:
    body: Any = None
    if response.content:
        content_type = response.headers.get("content-type", "")
        try:
            body = response.json() if content_type.startswith("application/json") else response.text
        except ValueError:
            body = response.text
    if response.is_error:
        raise error_from(response.status_code, body, response.headers.get("request-id"))
    return body


def _retry_delay(attempt: int, response: httpx.Response | None) -> float:
    if response is not None:
        after = str(response.headers.get("retry-after", ""))
        if after.replace(".", "", 1).isdigit():
            return min(float(after), MAX_RETRY_WAIT)
    return float(RETRY_BACKOFF * (2**attempt) * (0.5 + random.random()))


def _settle(
    request: _Request, attempt: int, max_retries: int, response: httpx.Response | None, error: httpx.TransportError | None
) -> tuple[bool, Any]:
    """What one attempt comes to: `(True, delay)` to try again after `delay` seconds, or
    `(False, body)`; raises the error to report. A connection that failed before the request
    was sent, or a read-only request, is tried again; a POST that may have run is not."""
    last = attempt == max_retries
    if error is not None:
        before_sending = isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout))
        if last or not (before_sending or request.read_only):
            raise APIConnectionError(f"{request.method} {request.path}: {error}") from error
        return True, _retry_delay(attempt, None)
    assert response is not None
    if response.status_code in RETRYABLE_STATUSES and not last:
        return True, _retry_delay(attempt, response)
    return False, _read(response)


def _tool_result(tool_use_id: str, content: str, is_error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": is_error}


class _Requests:
    """The API as requests: what each method sends, shared by both clients."""

    @staticmethod
    def create_execution(
        code: str,
        container: str | None,
        tools: Sequence[Mapping[str, Any]] | None,
        tool_names: Sequence[str] | None,
        limits: Mapping[str, int] | None,
    ) -> _Request:
        body = _drop_none({"code": code, "container": container, "tools": tools, "tool_names": tool_names, "limits": limits})
        return _Request("POST", "/v1/executions", body)

    @staticmethod
    def submit_tool_results(execution_id: str, results: Sequence[ToolResult]) -> _Request:
        return _Request("POST", f"/v1/executions/{execution_id}/tool_results", {"tool_results": list(results)})

    @staticmethod
    def decide_approvals(execution_id: str, decisions: Sequence[Mapping[str, Any]], by: str | None) -> _Request:
        body = _drop_none({"decisions": list(decisions), "by": by})
        return _Request("POST", f"/v1/executions/{execution_id}/approvals", body)

    @staticmethod
    def preview(
        code: str, container: str | None, tools: Sequence[Mapping[str, Any]] | None, tool_names: Sequence[str] | None
    ) -> _Request:
        body = _drop_none({"code": code, "container": container, "tools": tools, "tool_names": tool_names})
        return _Request("POST", "/v1/executions/preview", body, reads_only=True)

    @staticmethod
    def list_executions(**filters: Any) -> _Request:
        return _Request("GET", "/v1/executions", params=_drop_none(filters))

    @staticmethod
    def search_tools(query: str | None, pattern: str | None, limit: int | None) -> _Request:
        body = _drop_none({"query": query, "pattern": pattern, "limit": limit})
        return _Request("POST", "/v1/tools/search", body, reads_only=True)


class Sluice:
    """A synchronous client. `Sluice(base_url, api_key)`; both default to the environment
    (`SLUICE_BASE_URL`, `SLUICE_API_KEY`)."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        http_client: httpx.Client | None = None,
    ) -> None:
        self.base_url = (base_url or os.environ.get("SLUICE_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("SLUICE_API_KEY")
        headers = {"authorization": f"Bearer {key}"} if key else {}
        self._http = http_client or httpx.Client(timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT))
        self._headers = headers
        self.max_retries = max_retries

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Sluice:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send(self, request: _Request) -> Any:
        for attempt in range(self.max_retries + 1):
            response, error = None, None
            try:
                response = self._http.request(
                    request.method, self.base_url + request.path, json=request.json, params=request.params, headers=self._headers
                )
            except httpx.TransportError as failed:
                error = failed
            retry, value = _settle(request, attempt, self.max_retries, response, error)
            if not retry:
                return value
            time.sleep(value)
        raise AssertionError("unreachable")

    def _model(self, model: type[M], request: _Request) -> M:
        return model.model_validate(self._send(request))

    # Executions.
    def create_execution(
        self,
        code: str,
        *,
        container: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_names: Sequence[str] | None = None,
        limits: Mapping[str, int] | None = None,
    ) -> Execution:
        return self._model(Execution, _Requests.create_execution(code, container, tools, tool_names, limits))

    def submit_tool_results(self, execution_id: str, results: Sequence[ToolResult]) -> Execution:
        return self._model(Execution, _Requests.submit_tool_results(execution_id, results))

    def get_execution(self, execution_id: str) -> Execution:
        return self._model(Execution, _Request("GET", f"/v1/executions/{execution_id}"))

    def decide_approvals(
        self, execution_id: str, decisions: Sequence[Mapping[str, Any]], *, by: str | None = None
    ) -> Execution:
        """Decides held calls: each decision is `{"id", "decision": "approve" | "deny", "reason"?}`."""
        return self._model(Execution, _Requests.decide_approvals(execution_id, decisions, by))

    def approve(self, execution_id: str, approval_id: str, *, by: str | None = None) -> Execution:
        return self.decide_approvals(execution_id, [_decision(approval_id, True)], by=by)

    def deny(self, execution_id: str, approval_id: str, reason: str | None = None, *, by: str | None = None) -> Execution:
        return self.decide_approvals(execution_id, [_decision(approval_id, reason or False)], by=by)

    def preview(
        self,
        code: str,
        *,
        container: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_names: Sequence[str] | None = None,
    ) -> Preview:
        """The tools `code` names and whether calls would need approval; nothing runs."""
        return self._model(Preview, _Requests.preview(code, container, tools, tool_names))

    def list_executions(self, **filters: Any) -> list[ExecutionSummary]:
        body = self._send(_Requests.list_executions(**filters))
        return [ExecutionSummary.model_validate(row) for row in body["data"]]

    def replay(self, execution_id: str) -> Replay:
        return self._model(Replay, _Request("POST", f"/v1/executions/{execution_id}/replay"))

    def run(
        self,
        code: str,
        *,
        handlers: Mapping[str, Callable[..., Any]] | None = None,
        container: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_names: Sequence[str] | None = None,
        limits: Mapping[str, int] | None = None,
        approver: Approver | None = None,
    ) -> Execution:
        """Runs `code` to the end, answering each client tool call with `handlers[name](**input)`
        (its return value as text, JSON for non-strings; an exception as an error result) and
        each call held for approval with `approver(request)`. Without an approver, an execution
        that waits for approval is returned as it is, for a person to decide."""
        execution = self.create_execution(code, container=container, tools=tools, tool_names=tool_names, limits=limits)
        while execution.status == "requires_action":
            if execution.approval_requests:
                if approver is None:
                    return execution
                decisions = [_decision(r.id, approver(r)) for r in execution.approval_requests]
                execution = self.decide_approvals(execution.id, decisions)
                continue
            results = [_answer(handlers or {}, use.name, use.id, use.input) for use in execution.tool_uses]
            try:
                execution = self.submit_tool_results(execution.id, results)
            except (ConflictError, InvalidRequestError):
                # The execution moved on while the handlers ran (a call timed out inside the
                # script, which then finished or asked for other calls): go on from where it is.
                now = self.get_execution(execution.id)
                if _same_calls(now, execution):
                    raise
                execution = now
        return execution

    # Containers.
    def create_container(self) -> Container:
        return self._model(Container, _Request("POST", "/v1/containers"))

    def get_container(self, container_id: str) -> Container:
        return self._model(Container, _Request("GET", f"/v1/containers/{container_id}"))

    def delete_container(self, container_id: str) -> None:
        self._send(_Request("DELETE", f"/v1/containers/{container_id}"))

    def fork_container(self, container_id: str) -> Container:
        return self._model(Container, _Request("POST", f"/v1/containers/{container_id}/fork"))

    def export_container(self, container_id: str) -> str:
        """The container's audit bundle (JSON lines)."""
        return str(self._send(_Request("GET", f"/v1/containers/{container_id}/export")))

    # Tools.
    def create_tool(self, definition: Mapping[str, Any]) -> dict[str, Any]:
        return dict(self._send(_Request("POST", "/v1/tools", dict(definition))))

    def list_tools(self) -> list[dict[str, Any]]:
        return list(self._send(_Request("GET", "/v1/tools"))["data"])

    def get_tool(self, name: str) -> dict[str, Any]:
        return dict(self._send(_Request("GET", f"/v1/tools/{name}")))

    def delete_tool(self, name: str) -> None:
        self._send(_Request("DELETE", f"/v1/tools/{name}"))

    def search_tools(self, query: str | None = None, *, pattern: str | None = None, limit: int | None = None) -> dict[str, Any]:
        """The key's tools (deferred ones included) that match `query` (words) or `pattern` (a
        regular expression): Anthropic's `tool_search_tool_search_result`, plus each tool's
        Python signature under `tools`."""
        return dict(self._send(_Requests.search_tools(query, pattern, limit)))

    def health(self) -> Health:
        return self._model(Health, _Request("GET", "/healthz"))


class AsyncSluice:
    """The asynchronous client: the same methods as `Sluice`, awaited."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url = (base_url or os.environ.get("SLUICE_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("SLUICE_API_KEY")
        self._headers = {"authorization": f"Bearer {key}"} if key else {}
        self._http = http_client or httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT))
        self.max_retries = max_retries

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncSluice:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def _send(self, request: _Request) -> Any:
        for attempt in range(self.max_retries + 1):
            response, error = None, None
            try:
                response = await self._http.request(
                    request.method, self.base_url + request.path, json=request.json, params=request.params, headers=self._headers
                )
            except httpx.TransportError as failed:
                error = failed
            retry, value = _settle(request, attempt, self.max_retries, response, error)
            if not retry:
                return value
            await asyncio.sleep(value)
        raise AssertionError("unreachable")

    async def _model(self, model: type[M], request: _Request) -> M:
        return model.model_validate(await self._send(request))

    async def create_execution(
        self,
        code: str,
        *,
        container: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_names: Sequence[str] | None = None,
        limits: Mapping[str, int] | None = None,
    ) -> Execution:
        return await self._model(Execution, _Requests.create_execution(code, container, tools, tool_names, limits))

    async def submit_tool_results(self, execution_id: str, results: Sequence[ToolResult]) -> Execution:
        return await self._model(Execution, _Requests.submit_tool_results(execution_id, results))

    async def get_execution(self, execution_id: str) -> Execution:
        return await self._model(Execution, _Request("GET", f"/v1/executions/{execution_id}"))

    async def decide_approvals(
        self, execution_id: str, decisions: Sequence[Mapping[str, Any]], *, by: str | None = None
    ) -> Execution:
        return await self._model(Execution, _Requests.decide_approvals(execution_id, decisions, by))

    async def approve(self, execution_id: str, approval_id: str, *, by: str | None = None) -> Execution:
        return await self.decide_approvals(execution_id, [_decision(approval_id, True)], by=by)

    async def deny(
        self, execution_id: str, approval_id: str, reason: str | None = None, *, by: str | None = None
    ) -> Execution:
        return await self.decide_approvals(execution_id, [_decision(approval_id, reason or False)], by=by)

    async def preview(
        self,
        code: str,
        *,
        container: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_names: Sequence[str] | None = None,
    ) -> Preview:
        return await self._model(Preview, _Requests.preview(code, container, tools, tool_names))

    async def list_executions(self, **filters: Any) -> list[ExecutionSummary]:
        body = await self._send(_Requests.list_executions(**filters))
        return [ExecutionSummary.model_validate(row) for row in body["data"]]

    async def replay(self, execution_id: str) -> Replay:
        return await self._model(Replay, _Request("POST", f"/v1/executions/{execution_id}/replay"))

    async def run(
        self,
        code: str,
        *,
        handlers: Mapping[str, Callable[..., Any]] | None = None,
        container: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_names: Sequence[str] | None = None,
        limits: Mapping[str, int] | None = None,
        approver: Approver | None = None,
    ) -> Execution:
        """As `Sluice.run`; a handler may be a coroutine function."""
        execution = await self.create_execution(
            code, container=container, tools=tools, tool_names=tool_names, limits=limits
        )
        while execution.status == "requires_action":
            if execution.approval_requests:
                if approver is None:
                    return execution
                decisions = [_decision(r.id, approver(r)) for r in execution.approval_requests]
                execution = await self.decide_approvals(execution.id, decisions)
                continue
            answering = [_answer_async(handlers or {}, u.name, u.id, u.input) for u in execution.tool_uses]
            results = list(await asyncio.gather(*answering))
            try:
                execution = await self.submit_tool_results(execution.id, results)
            except (ConflictError, InvalidRequestError):
                now = await self.get_execution(execution.id)
                if _same_calls(now, execution):
                    raise
                execution = now
        return execution

    async def create_container(self) -> Container:
        return await self._model(Container, _Request("POST", "/v1/containers"))

    async def get_container(self, container_id: str) -> Container:
        return await self._model(Container, _Request("GET", f"/v1/containers/{container_id}"))

    async def delete_container(self, container_id: str) -> None:
        await self._send(_Request("DELETE", f"/v1/containers/{container_id}"))

    async def fork_container(self, container_id: str) -> Container:
        return await self._model(Container, _Request("POST", f"/v1/containers/{container_id}/fork"))

    async def export_container(self, container_id: str) -> str:
        return str(await self._send(_Request("GET", f"/v1/containers/{container_id}/export")))

    async def create_tool(self, definition: Mapping[str, Any]) -> dict[str, Any]:
        return dict(await self._send(_Request("POST", "/v1/tools", dict(definition))))

    async def list_tools(self) -> list[dict[str, Any]]:
        return list((await self._send(_Request("GET", "/v1/tools")))["data"])

    async def get_tool(self, name: str) -> dict[str, Any]:
        return dict(await self._send(_Request("GET", f"/v1/tools/{name}")))

    async def delete_tool(self, name: str) -> None:
        await self._send(_Request("DELETE", f"/v1/tools/{name}"))

    async def search_tools(
        self, query: str | None = None, *, pattern: str | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        return dict(await self._send(_Requests.search_tools(query, pattern, limit)))

    async def health(self) -> Health:
        return await self._model(Health, _Request("GET", "/healthz"))


def _decision(approval_id: str, verdict: bool | str) -> dict[str, Any]:
    """A decision: True approves; False denies; a string denies with that reason."""
    if verdict is True:
        return {"id": approval_id, "decision": "approve"}
    reason = verdict if isinstance(verdict, str) and verdict else None
    return _drop_none({"id": approval_id, "decision": "deny", "reason": reason})


def _same_calls(now: Execution, before: Execution) -> bool:
    """Whether `now` still waits on exactly the calls `before` did (a refusal that is not the
    execution moving on)."""
    return now.status == "requires_action" and [u.id for u in now.tool_uses] == [u.id for u in before.tool_uses]


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value, default=str)


def _answer(handlers: Mapping[str, Callable[..., Any]], name: str, use_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    handler = handlers.get(name)
    if handler is None:
        return _tool_result(use_id, f"no handler for tool {name!r}", is_error=True)
    try:
        return _tool_result(use_id, _as_text(handler(**arguments)))
    except Exception as error:  # the script sees it as sluice.ToolError
        return _tool_result(use_id, f"{type(error).__name__}: {error}", is_error=True)


async def _answer_async(
    handlers: Mapping[str, Callable[..., Any]], name: str, use_id: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    handler = handlers.get(name)
    if handler is None:
        return _tool_result(use_id, f"no handler for tool {name!r}", is_error=True)
    try:
        value = handler(**arguments)
        if inspect.isawaitable(value):
            value = await value
        return _tool_result(use_id, _as_text(value))
    except Exception as error:
        return _tool_result(use_id, f"{type(error).__name__}: {error}", is_error=True)


__all__ = ["AsyncSluice", "Sluice", "SluiceError"]
