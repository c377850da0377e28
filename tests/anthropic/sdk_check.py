"""Validates Sluice's response bodies with the official `anthropic` SDK's pydantic models, as a
developer who knows Anthropic's API would, against a live `sluice serve`. Prints one JSON
object of what held (the Rust test `anthropic_sdk::the_anthropic_sdk_validates_every_body` checks it);
a body the SDK refuses raises, naming the model and the body.

    sdk_check.py BASE_URL API_KEY
"""

import json
import sys
import threading
import time
import urllib.error
import urllib.request

from anthropic.types import (
    CodeExecutionResultBlock,
    CodeExecutionToolResultBlock,
    Container,
    ServerToolCaller20260120,
    ServerToolUsage,
    ToolParam,
    ToolSearchToolSearchResultBlock,
    ToolUseBlock,
)
from anthropic import Anthropic
from anthropic.types.beta import BetaDeletedFile, BetaFileMetadata
from anthropic.types.shared import ErrorResponse
from pydantic import TypeAdapter

BASE, KEY = sys.argv[1], sys.argv[2]


def call(method, path, body=None, key=KEY, raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(BASE + path, data=data, method=method)
    request.add_header("content-type", "application/json")
    if key:
        request.add_header("authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, dict(response.headers), json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read() or b"null")


def valid(model, value):
    try:
        return model.model_validate(value)
    except Exception as error:
        raise SystemExit(f"{model.__name__} refused {json.dumps(value)}: {error}")


seen = {"validated": []}


def check(model, value):
    valid(model, value)
    seen["validated"].append(model.__name__)


tool = {"name": "lookup", "allowed_callers": ["code_execution_20260120"], "eager_input_streaming": True,
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}
status, _, paused = call("POST", "/v1/executions", {"code": "r = await lookup(q='x')\nprint(r)", "tools": [tool]})
assert status == 200 and paused["status"] == "requires_action", paused
for block in paused["tool_uses"]:
    parsed = valid(ToolUseBlock, block)
    assert isinstance(parsed.caller, ServerToolCaller20260120), parsed.caller
    seen["validated"].append("ToolUseBlock")
check(Container, paused["container"])

answer = {"tool_results": [{"type": "tool_result", "tool_use_id": paused["tool_uses"][0]["id"],
                            "cache_control": {"type": "ephemeral"},
                            "content": [{"type": "text", "text": "found", "citations": None}]}]}
status, _, done = call("POST", f"/v1/executions/{paused['id']}/tool_results", answer)
assert status == 200 and done["status"] == "completed", done
check(CodeExecutionResultBlock, done["result"])
check(CodeExecutionToolResultBlock, done["code_execution_tool_result"])
check(ServerToolUsage, done["usage"]["server_tool_use"])
check(Container, done["container"])

status, _, again = call("POST", "/v1/executions", {"code": "print(r * 2)", "container": {"id": done["container"]["id"]}})
seen["container_object"] = again["result"]["stdout"]

status, _, stopped = call("POST", "/v1/executions", {"code": "while True: pass", "limits": {"time_ms": 200}})
block = valid(CodeExecutionToolResultBlock, stopped["code_execution_tool_result"])
seen["validated"].append("CodeExecutionToolResultBlock")
seen["stop_error_code"] = block.content.error_code

deferred = {"name": "rotate_signing_keys", "description": "Rotate the service's signing keys",
            "defer_loading": True, "allowed_callers": ["code_execution_20260120"],
            "input_schema": {"type": "object", "properties": {"service": {"type": "string"}}}}
status, _, created = call("POST", "/v1/tools", deferred)
assert status == 201, created
# ToolParam is a TypedDict (a request shape): pydantic checks the definition Sluice gives back.
assert TypeAdapter(ToolParam).validate_python(created)["defer_loading"] is True, created
seen["validated"].append("ToolParam")
status, _, found = call("POST", "/v1/tools/search", {"query": "rotate the signing keys", "limit": 3})
assert status == 200, found
block = valid(ToolSearchToolSearchResultBlock, found)
seen["validated"].append("ToolSearchToolSearchResultBlock")
seen["tool_search"] = [reference.tool_name for reference in block.tool_references]
_, _, body = call("POST", "/v1/tools/search", {"pattern": "(?<=x)y"})
check(ErrorResponse, body)
seen["tool_search_error"] = [body["error"]["type"], body["error"]["code"]]

# Files through the SDK's own client: upload, place with `container_upload`, download outputs.
client = Anthropic(base_url=BASE, api_key=KEY)
uploaded = client.beta.files.upload(file=("sales.csv", b"region,amount\nnorth,10\nsouth,7\n", "text/csv"))
check(BetaFileMetadata, uploaded.model_dump(mode="json"))
script = "rows = open('sales.csv').read().splitlines()[1:]\nopen('count.txt', 'w').write(str(len(rows)))"
status, _, wrote = call("POST", "/v1/executions", {"code": script, "container": done["container"]["id"],
                                                    "files": [{"type": "container_upload", "file_id": uploaded.id}]})
assert status == 200 and wrote["status"] == "completed", wrote
result = valid(CodeExecutionResultBlock, wrote["result"])
seen["output_files"] = [client.beta.files.download(block.file_id).read().decode() for block in result.content]
check(BetaFileMetadata, client.beta.files.retrieve_metadata(result.content[0].file_id).model_dump(mode="json"))
seen["files_listed"] = sorted(f.filename for f in client.beta.files.list())
check(BetaDeletedFile, client.beta.files.delete(uploaded.id).model_dump(mode="json"))

errors = {}
_, headers, body = call("POST", "/v1/executions", raw=b"{not json")
errors["400"] = body
_, _, body = call("POST", "/v1/executions", {"code": "1"}, key=None)
errors["401"] = body
_, _, body = call("GET", "/v1/containers/7f1c3a52-0000-4000-8000-000000000000")
errors["404"] = body
status, _, waiting = call("POST", "/v1/executions", {"code": "await lookup(q='y')", "tools": [tool]})
_, _, body = call("POST", "/v1/executions", {"code": "1", "container": waiting["container"]["id"]})
errors["409"] = body
# The node holds two containers at most. Idle and paused ones are saved to make room, so
# Anthropic's overloaded status comes once both hold a running script: a new container is
# refused then, not queued.
busy = [threading.Thread(target=call, args=("POST", "/v1/executions",
                                            {"code": "while True: pass", "limits": {"time_ms": 4000}}))
        for _ in range(2)]
for thread in busy:
    thread.start()
for _ in range(15):
    time.sleep(0.2)
    status, _, body = call("POST", "/v1/executions", {"code": "1"})
    if status != 200:
        errors[str(status)] = body
        break
for thread in busy:
    thread.join()
for status, body in errors.items():
    check(ErrorResponse, body)
seen["errors"] = {status: [body["error"]["type"], body["error"]["code"]] for status, body in errors.items()}
seen["request_id_matches"] = headers.get("request-id") == errors["400"]["request_id"]
print(json.dumps(seen))
