"""The official `anthropic` SDK as the client of Sluice's `POST /v1/messages` (its `base_url` at
Sluice, nothing else changed), against a scripted upstream (tests/messages/upstream.py).

argv: base_url, api_key, mode
  mode `ptc`: a conversation whose code pauses on client tools twice, then fails, then the
      model ends its turn; once as JSON answers and once streamed; then an upstream error.
  mode `audit DATA TOOLS`: the expense audit, (b) through code execution and (a) with every tool
      called directly by the model, the tools answered from DATA (JSON written by the test).
Every answer is validated with the SDK's own models. Prints one JSON object.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anthropic
from anthropic.types.beta import BetaMessage

base_url, api_key, mode = sys.argv[1], sys.argv[2], sys.argv[3]
client = anthropic.Anthropic(base_url=base_url, api_key=api_key, max_retries=0)
CODE_TOOL = {"type": "code_execution_20260120", "name": "code_execution"}
# Per streamed answer: how many text deltas its text came in (more than one: streamed as written).
TEXT_DELTAS: list[int] = []
FROM_CODE = ["code_execution_20260120"]


def as_param(block: Any) -> dict[str, Any]:
    """A response block as the next request carries it back."""
    return block.model_dump(exclude_none=True)


def create(stream: bool, **request: Any) -> BetaMessage:
    if stream:
        with client.beta.messages.stream(**request) as events:
            seen = [event for event in events]
            kinds = {event.type for event in seen}
            assert {"message_start", "content_block_start", "message_delta", "message_stop"} <= kinds, kinds
            TEXT_DELTAS.append(sum(1 for e in seen if e.type == "content_block_delta" and e.delta.type == "text_delta"))
            message = events.get_final_message()
        BetaMessage.model_validate(message.model_dump())
        return message
    raw = client.beta.messages.with_raw_response.create(**request)
    # The SDK builds its models without checking; checking them is the point here.
    return BetaMessage.model_validate(raw.http_response.json())


def converse(question: str, tools: list[dict[str, Any]], answer: Any, stream: bool = False) -> list[BetaMessage]:
    """The client loop of programmatic tool calling: answer each `tool_use`, send it all back."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    replies: list[BetaMessage] = []
    container = None
    while len(replies) < 30:
        request: dict[str, Any] = {"model": "scripted", "max_tokens": 1024, "messages": messages, "tools": tools}
        if container:
            request["container"] = container
        reply = create(stream, **request)
        replies.append(reply)
        messages.append({"role": "assistant", "content": [as_param(b) for b in reply.content]})
        if reply.container:
            container = reply.container.id
        if reply.stop_reason != "tool_use":
            return replies
        results = []
        for block in reply.content:
            if block.type == "tool_use":
                text, is_error = answer(block.name, block.input)
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": text, "is_error": is_error})
        messages.append({"role": "user", "content": results})
    raise AssertionError("the conversation never ended")


def summary(replies: list[BetaMessage]) -> dict[str, Any]:
    results = [b for r in replies for b in r.content if b.type == "code_execution_tool_result"]
    return {
        "stops": [r.stop_reason for r in replies],
        "blocks": [[b.type for b in r.content] for r in replies],
        "callers": [b.caller.type for r in replies for b in r.content if b.type == "tool_use" and b.caller],
        "caller_tool_ids": sorted({
            b.caller.tool_id for r in replies for b in r.content
            if b.type == "tool_use" and b.caller and b.caller.type != "direct"
        }),
        "server_tool_ids": [b.id for r in replies for b in r.content if b.type == "server_tool_use"],
        "results": [b.content.model_dump(exclude_none=True) for b in results],
        "final_text": "".join(b.text for b in replies[-1].content if b.type == "text"),
        "containers": sorted({r.container.id for r in replies if r.container}),
        "usage": [r.usage.model_dump(exclude_none=True) for r in replies],
    }


def ptc() -> dict[str, Any]:
    tools = [
        CODE_TOOL,
        {"name": "get_team_members", "description": "Members of a department.", "allowed_callers": FROM_CODE,
         "input_schema": {"type": "object", "properties": {"department": {"type": "string"}}, "required": ["department"]}},
        {"name": "get_expenses", "description": "Expense rows of an employee in a quarter.", "allowed_callers": FROM_CODE,
         "input_schema": {"type": "object", "properties": {"employee_id": {"type": "string"}, "quarter": {"type": "string"}},
                          "required": ["employee_id", "quarter"]}},
    ]

    def answer(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        if name == "get_team_members":
            return json.dumps([{"id": "ENG001", "name": "Ada RAW-ROW-MARKER"}, {"id": "ENG002", "name": "Grace"}]), False
        if arguments["employee_id"] == "ENG002":
            return "database down RAW-ERROR-MARKER", True
        return json.dumps([{"amount": n, "note": "RAW-ROW-MARKER"} for n in (10, 20, 30)]), False

    question = "How many expense rows does engineering have for Q3?"
    plain = summary(converse(question, tools, answer))
    streamed = summary(converse(question, tools, answer, stream=True))
    try:
        create(False, model="scripted", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
        error: Any = "no error"
    except anthropic.APIStatusError as failure:
        error = [failure.status_code, failure.body["error"]["type"], failure.body["error"]["code"]]
    return {"plain": plain, "streamed": streamed, "text_deltas": TEXT_DELTAS, "upstream_error": error}


def audit(data_path: str, tools_path: str) -> dict[str, Any]:
    data = json.loads(open(data_path).read())
    specs = json.loads(open(tools_path).read())
    calls = {"n": 0}

    def answer(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        calls["n"] += 1
        if name == "get_team_members":
            return json.dumps(data["team"][arguments["department"]]), False
        if name == "get_expenses":
            return json.dumps(data["expenses"][arguments["employee_id"]]), False
        return json.dumps(data["budgets"][arguments["user_id"]]), False

    question = data["question"]
    through_code = [CODE_TOOL] + [dict(spec, allowed_callers=FROM_CODE) for spec in specs]
    ptc_replies = converse(question, through_code, answer)
    ptc_calls, calls["n"] = calls["n"], 0
    direct_replies = converse(question, specs, answer)
    return {
        "ptc": {**summary(ptc_replies), "tool_calls": ptc_calls},
        "direct": {**summary(direct_replies), "tool_calls": calls["n"]},
    }


print(json.dumps(ptc() if mode == "ptc" else audit(sys.argv[4], sys.argv[5])))
