# sluice: stop = "tool_call_limit_exceeded"
# sluice: limits = {"max_tool_calls": 100}
import _sluice_abi
# Hand the host a blocking wait with more calls than the limit allows.
_sluice_abi.wait({"kind": "pending", "calls": [[i, "x", "{}"] for i in range(500)], "cancelled": []})
