"""The client against a live `sluice serve`: every resource, typed errors, retries."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest
from conftest import Server

from sluice_client import (
    AsyncSluice,
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    Sluice,
)

LOOKUP = {
    "name": "lookup",
    "allowed_callers": ["code_execution_20260120"],
    "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
}


def test_an_execution_pauses_for_tools_resumes_and_is_on_record(server: Server) -> None:
    with Sluice(server.base_url, "key-a") as sluice:
        calls: list[str] = []

        def lookup(q: str) -> dict[str, Any]:
            calls.append(q)
            return {"q": q, "n": len(q)}

        done = sluice.run(
            "import asyncio, json\nr = await asyncio.gather(lookup(q='ab'), lookup(q='abc'))\n"
            "total = sum(json.loads(x)['n'] for x in r)\nprint(total)",
            tools=[LOOKUP],
            handlers={"lookup": lookup},
        )
        assert (done.status, done.stdout, sorted(calls)) == ("completed", "5\n", ["ab", "abc"])
        again = sluice.create_execution("print(total * 2)", container=done.container.id)
        assert again.stdout == "10\n"
        audited = sluice.get_execution(done.id)
        assert audited.code is not None and [c["tool"] for c in audited.ledger or []] == ["lookup", "lookup"]
        listed = sluice.list_executions(container=done.container.id)
        assert {row.id for row in listed} == {done.id, again.id}
        assert sluice.replay(done.id).result == "identical"
        bundle = sluice.export_container(done.container.id)
        header, first = (json.loads(line) for line in bundle.splitlines()[:2])
        assert (header["container_id"], first["kind"]) == (done.container.id, "container_created")
        fork = sluice.fork_container(done.container.id)
        assert sluice.create_execution("print(total)", container=fork.id).stdout == "5\n"
        sluice.delete_container(fork.id)
        with pytest.raises(NotFoundError):
            sluice.get_container(fork.id)


def test_a_handler_that_raises_is_an_error_result_the_script_can_catch(server: Server) -> None:
    with Sluice(server.base_url, "key-a") as sluice:

        def lookup(q: str) -> str:
            raise KeyError(q)

        code = "import sluice\ntry:\n    await lookup(q='x')\nexcept sluice.ToolError as e:\n    print('caught', e)"
        done = sluice.run(code, tools=[LOOKUP], handlers={"lookup": lookup})
        assert done.stdout.startswith("caught KeyError"), done


def test_run_goes_on_when_the_script_stopped_waiting_for_a_slow_handler(server: Server) -> None:
    with Sluice(server.base_url, "key-a") as sluice:

        def slow(q: str) -> str:
            time.sleep(1.0)
            return q

        code = "try:\n    await lookup(q='x')\nexcept TimeoutError:\n    print('gave up waiting')"
        done = sluice.run(code, tools=[LOOKUP], handlers={"lookup": slow}, limits={"pending_timeout_ms": 300})
        assert (done.status, done.stdout) == ("completed", "gave up waiting\n"), done


def test_errors_are_typed_with_stable_codes(server: Server) -> None:
    with Sluice(server.base_url, "wrong-key") as stranger:
        with pytest.raises(AuthenticationError) as unauthenticated:
            stranger.create_execution("1")
        assert (unauthenticated.value.status, unauthenticated.value.code) == (401, "authentication")
    with Sluice(server.base_url, "key-a", max_retries=0) as sluice:
        with pytest.raises(InvalidRequestError) as invalid:
            sluice.create_execution("1", limits={"cpu": 1})
        assert invalid.value.request_id and invalid.value.request_id.startswith("req_")
        waiting = sluice.create_execution("await lookup(q='x')", tools=[LOOKUP])
        assert waiting.status == "requires_action" and waiting.tool_uses[0].caller.type == "code_execution_20260120"
        with pytest.raises(ConflictError) as busy:
            sluice.create_execution("1", container=waiting.container.id)
        assert (busy.value.status, busy.value.type, busy.value.code) == (409, "invalid_request_error", "conflict")
    with Sluice(server.base_url, "key-b") as other:
        with pytest.raises(NotFoundError):
            other.get_execution(waiting.id)


def test_tools_are_registered_per_key(server: Server) -> None:
    with Sluice(server.base_url, "key-a") as sluice, Sluice(server.base_url, "key-b") as other:
        sluice.create_tool({**LOOKUP, "name": "registered"})
        assert sluice.get_tool("registered")["name"] == "registered"
        assert "registered" in [t["name"] for t in sluice.list_tools()]
        assert "registered" not in [t["name"] for t in other.list_tools()]
        done = sluice.run("print(await registered(q='z'))", tool_names=["registered"], handlers={"registered": lambda q: q * 3})
        assert done.stdout == "zzz\n"
        deferred = {**LOOKUP, "name": "rotate_keys", "description": "Rotate the signing keys", "defer_loading": True}
        sluice.create_tool(deferred)
        found = sluice.search_tools("rotate signing keys", limit=2)
        assert found["tool_references"][0] == {"type": "tool_reference", "tool_name": "rotate_keys"}
        assert found["tools"][0]["signature"].startswith("async def rotate_keys(")
        assert [t["name"] for t in sluice.search_tools(pattern="^registered$")["tools"]] == ["registered"]
        assert other.search_tools(pattern="rotate")["tool_references"] == [], "another key's tools are not searched"
        with pytest.raises(InvalidRequestError) as refused:
            sluice.search_tools(pattern="(?<=x)y")
        assert refused.value.code == "invalid_tool_input"
        sluice.delete_tool("registered")
        with pytest.raises(NotFoundError):
            sluice.get_tool("registered")


def test_the_async_client_does_the_same(server: Server) -> None:
    async def scenario() -> None:
        async with AsyncSluice(server.base_url, "key-b") as sluice:
            assert (await sluice.health()).status == "ok"

            async def lookup(q: str) -> str:
                await asyncio.sleep(0)
                return q.upper()

            done = await sluice.run("x = await lookup(q='hi')\nprint(x)", tools=[LOOKUP], handlers={"lookup": lookup})
            assert done.stdout == "HI\n"
            again = await sluice.create_execution("print(x + '!')", container=done.container.id)
            assert again.stdout == "HI!\n"
            assert (await sluice.replay(again.id)).result == "identical"

    asyncio.run(scenario())


def test_refusals_that_ran_nothing_are_retried_and_the_rest_are_not() -> None:
    answers = iter([529, 529, 200])
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.method)
        status = next(answers)
        if status != 200:
            error = {"type": "error", "error": {"type": "overloaded_error", "message": "full", "code": "overloaded"}}
            return httpx.Response(status, json={**error, "request_id": "req_1"}, headers={"retry-after": "0"})
        return httpx.Response(200, json={"status": "ok", "image": "x"})

    client = httpx.Client(transport=httpx.MockTransport(handler))
    assert Sluice("http://sluice.test", http_client=client).health().status == "ok"
    assert seen == ["GET", "GET", "GET"]

    answers = iter([529, 529, 529])
    with pytest.raises(OverloadedError) as overloaded:
        Sluice("http://sluice.test", http_client=httpx.Client(transport=httpx.MockTransport(handler)), max_retries=2).health()
    assert (overloaded.value.status, overloaded.value.request_id) == (529, "req_1")

    posts: list[str] = []

    def broken(request: httpx.Request) -> httpx.Response:
        posts.append(request.method)
        raise httpx.ReadError("connection reset after the request was sent")

    from sluice_client import APIConnectionError as SluiceConnectionError

    with pytest.raises(SluiceConnectionError):
        Sluice("http://sluice.test", http_client=httpx.Client(transport=httpx.MockTransport(broken))).create_execution("1")
    assert posts == ["POST"], "a POST that may have run is not sent again"


SEND = {
    "name": "send_email",
    "allowed_callers": ["code_execution_20260120"],
    "requires_approval": True,
    "input_schema": {"type": "object", "properties": {"to": {"type": "string"}}},
}
SEND_CODE = (
    "import sluice\nfor to in ('a@example.com', 'b@example.com'):\n    try:\n"
    "        print(await send_email(to=to))\n    except sluice.ToolDeniedError as e:\n        print('denied', e)"
)


def test_held_calls_are_decided_by_a_person_or_an_approver(server: Server) -> None:
    with Sluice(server.base_url, "key-a") as sluice:
        preview = sluice.preview(SEND_CODE, tools=[SEND])
        assert [(t.name, t.approval, t.lines) for t in preview.tools] == [("send_email", "required", [4])]
        held = sluice.run(SEND_CODE, tools=[SEND], handlers={"send_email": lambda to: f"sent to {to}"})
        assert held.status == "requires_action" and held.tool_uses == []
        (request,) = held.approval_requests
        assert (request.name, request.input, request.executor) == ("send_email", {"to": "a@example.com"}, "client")
        approved = sluice.approve(held.id, request.id, by="ana")
        assert [u.id for u in approved.tool_uses] == [request.tool_use_id]
        answered = sluice.submit_tool_results(
            held.id, [{"type": "tool_result", "tool_use_id": request.tool_use_id, "content": "sent"}]
        )
        (second,) = answered.approval_requests
        done = sluice.deny(held.id, second.id, "not b")
        assert (done.status, done.stdout) == ("completed", "sent\ndenied the call to send_email was denied: not b\n")
        ledger = sluice.get_execution(held.id).ledger or []
        assert [(c["status"], c["approval"]["decision"]) for c in ledger] == [("succeeded", "approved"), ("denied", "denied")]
        assert ledger[0]["approval"]["by"] == "ana" and ledger[1]["approval"]["by"].startswith("key_")
        assert [row.id for row in sluice.list_executions(approval="denied")] == [held.id]
        with pytest.raises(ConflictError):
            sluice.approve(held.id, second.id)  # decided already: it no longer waits

        def only_a(request: Any) -> bool | str:
            return True if request.input["to"].startswith("a@") else "only a"

        auto = sluice.run(SEND_CODE, tools=[SEND], handlers={"send_email": lambda to: f"sent to {to}"}, approver=only_a)
        assert auto.stdout == "sent to a@example.com\ndenied the call to send_email was denied: only a\n"


def test_the_async_client_decides_approvals_too(server: Server) -> None:
    async def main() -> None:
        async with AsyncSluice(server.base_url, "key-b") as sluice:
            held = await sluice.run(SEND_CODE, tools=[SEND])
            (request,) = held.approval_requests
            done = await sluice.deny(held.id, request.id)
            assert done.approval_requests[0].input == {"to": "b@example.com"}
            assert (await sluice.preview("x = 1", tools=[SEND])).tools == []

    asyncio.run(main())
