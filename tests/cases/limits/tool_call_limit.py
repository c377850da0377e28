# sluice: limits = {"max_tool_calls": 10}
# sluice: answers = {"ping": "pong"}
# sluice: stop = "tool_call_limit_exceeded"
import asyncio
print("calling")
await asyncio.gather(*(ping({}) for _ in range(11)))
