"""A scripted upstream model for the Messages endpoint's tests, speaking Anthropic's Messages API
(`POST /v1/messages`) or an OpenAI-compatible chat completions API (`POST /chat/completions`).

It answers from a script instead of a model, and appends every request it receives (path,
headers that matter, JSON body) to a JSON-lines log the test reads.

argv: dialect (anthropic | openai), mode, log_file
  mode `replay:FILE`: FILE holds `{"turns": [...], "repeat": N, "then": [...]}`: the turns
      N times over, then the others, answered in order, one per request; a turn is
      {"text": "..."}                  a final answer (end_turn)
      {"text"?: "...", "code": "..."}  a call of the code tool (and text before it)
      {"call": NAME, "input": {...}}   a direct call of a client tool
      {"status": 429, "message": "..."} an error answer
  mode `expense_audit`: a model that answers the expense audit question, reading what it is
      given: with the code tool it writes tests/messages/../../examples/expense_audit/script.py
      once and then reports the script's output; without it, it calls each tool itself and
      computes the answer from the results in its context.
Prints the port it listens on.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

dialect, mode, log_path = sys.argv[1], sys.argv[2], sys.argv[3]
turns: list[dict[str, Any]] = []
if mode.startswith("replay:"):
    recorded = json.loads(Path(mode.split(":", 1)[1]).read_text())
    turns = recorded["turns"] * recorded.get("repeat", 1) + recorded.get("then", [])
AUDIT_SCRIPT = (Path(__file__).parent / "../../examples/expense_audit/script.py").read_text()
served = 0


def log(line: dict[str, Any]) -> None:
    with open(log_path, "a") as out:
        out.write(json.dumps(line) + "\n")


# --- the conversation, read back the same way whatever the dialect ---------------------------

def tool_results(body: dict[str, Any]) -> list[str]:
    """The text of every tool result in the conversation, in order."""
    found = []
    if dialect == "openai":
        return [m["content"] for m in body["messages"] if m["role"] == "tool"]
    for message in body["messages"]:
        if isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block.get("content", "")
                    found.append(content if isinstance(content, str) else "".join(b["text"] for b in content))
    return found


def offered_tools(body: dict[str, Any]) -> list[str]:
    if dialect == "openai":
        return [t["function"]["name"] for t in body.get("tools", [])]
    return [t["name"] for t in body.get("tools", [])]


def expense_audit_turn(body: dict[str, Any]) -> dict[str, Any]:
    results = tool_results(body)
    if "code_execution" in offered_tools(body):
        if not results:
            return {"text": "I'll compute that in code.", "code": AUDIT_SCRIPT}
        return {"text": results[-1].strip()}
    if not results:
        return {"calls": [("get_team_members", {"department": "engineering"})]}
    team = json.loads(results[0])
    if len(results) == 1:
        calls = [("get_expenses", {"employee_id": m["id"], "quarter": "Q3"}) for m in team]
        calls += [("get_custom_budget", {"user_id": m["id"]}) for m in team]
        return {"calls": calls}
    # The model reads every result in its context and works the answer out itself.
    expenses, budgets = results[1 : 1 + len(team)], results[1 + len(team) :]
    approved_travel = [
        round(sum(row["amount"] for row in json.loads(items) if (row["category"], row["status"]) == ("travel", "approved")), 2)
        for items in expenses
    ]
    limits = [json.loads(budget)["budget"] or 5000 for budget in budgets]
    answer = [
        {"id": member["id"], "name": member["name"], "travel": spent, "budget": limit}
        for member, spent, limit in zip(team, approved_travel, limits)
        if spent > limit
    ]
    return {"text": json.dumps(answer)}


# --- answers in each dialect ------------------------------------------------------------------

def anthropic_answer(turn: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if turn.get("text"):
        content.append({"type": "text", "text": turn["text"]})
    calls = list(turn.get("calls", []))
    if "code" in turn:
        calls.append(("code_execution", {"code": turn["code"]}))
    if "call" in turn:
        calls.append((turn["call"], turn.get("input", {})))
    for n, (name, arguments) in enumerate(calls):
        content.append({"type": "tool_use", "id": f"toolu_up{served}_{n}", "name": name, "input": arguments})
    return {
        "id": f"msg_up{served}", "type": "message", "role": "assistant", "model": body["model"], "content": content,
        "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": len(json.dumps(body)) // 4, "output_tokens": len(json.dumps(content)) // 4},
    }


def openai_answer(turn: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    calls = list(turn.get("calls", []))
    if "code" in turn:
        calls.append(("code_execution", {"code": turn["code"]}))
    if "call" in turn:
        calls.append((turn["call"], turn.get("input", {})))
    message: dict[str, Any] = {"role": "assistant", "content": turn.get("text")}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_up{served}_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
            for n, (name, arguments) in enumerate(calls)
        ]
    return {
        "id": f"chatcmpl-{served}", "object": "chat.completion", "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": len(json.dumps(body)) // 4, "completion_tokens": len(json.dumps(message)) // 4},
    }


def halves(text: str) -> list[str]:
    """A text in two pieces, so a reader must join deltas."""
    return [text[: len(text) // 2], text[len(text) // 2 :]] if len(text) > 1 else [text]


def anthropic_events(answer: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """A message as Anthropic streams it."""
    start = dict(answer, content=[], stop_reason=None, usage={"input_tokens": answer["usage"]["input_tokens"], "output_tokens": 1})
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(answer["content"]):
        if block["type"] == "text":
            opened, pieces = {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in halves(block["text"])]
        else:
            opened = dict(block, input={})
            pieces = [{"type": "input_json_delta", "partial_json": p} for p in halves(json.dumps(block["input"]))]
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": opened}
        for delta in pieces:
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": answer["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": answer["usage"]["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


def openai_chunks(answer: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """A chat completion as OpenAI-compatible servers stream it: unnamed `data:` events."""
    message, base = answer["choices"][0]["message"], {"id": answer["id"], "object": "chat.completion.chunk", "model": answer["model"]}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[str, Any]:
        return "", dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])

    yield chunk({"role": "assistant"})
    for piece in halves(message["content"] or ""):
        if piece:
            yield chunk({"content": piece})
    for n, call in enumerate(message.get("tool_calls", [])):
        first, *rest = halves(call["function"]["arguments"])
        yield chunk({"tool_calls": [{"index": n, "id": call["id"], "type": "function",
                                     "function": {"name": call["function"]["name"], "arguments": first}}]})
        for piece in rest:
            yield chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]})
    yield chunk({}, answer["choices"][0]["finish_reason"])
    yield "", dict(base, choices=[], usage=answer["usage"])
    yield "", "[DONE]"


class Upstream(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
        global served
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        log({
            "path": self.path,
            "x-api-key": self.headers.get("x-api-key"),
            "authorization": self.headers.get("authorization"),
            "anthropic-version": self.headers.get("anthropic-version"),
            "body": body,
        })
        expected = "/v1/messages" if dialect == "anthropic" else "/chat/completions"
        if self.path != expected:
            self.reply(404, {"error": {"type": "not_found_error", "message": f"no route {self.path}"}})
            return
        if not turns:
            turn = expense_audit_turn(body)
        elif served < len(turns):
            turn = turns[served]
        else:
            turn = {"status": 500, "message": "the script has no more turns"}
        if "status" in turn:
            served += 1
            self.reply(turn["status"], {"type": "error", "error": {"type": "rate_limit_error", "message": turn["message"]}})
            return
        answer = anthropic_answer(turn, body) if dialect == "anthropic" else openai_answer(turn, body)
        served += 1
        if not body.get("stream"):
            self.reply(200, answer)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        events = anthropic_events(answer) if dialect == "anthropic" else openai_chunks(answer)
        for name, data in events:
            head = f"event: {name}\r\n" if name else ""
            self.wfile.write(f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\r\n\r\n".encode())
            self.wfile.flush()

    def reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
print(server.server_address[1], flush=True)
server.serve_forever()
