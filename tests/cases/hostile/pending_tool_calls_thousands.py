# sluice: answers = {"lookup": "ok"}
# sluice: limits = {"max_tool_calls": 1000}
# sluice: stop = "tool_call_limit_exceeded"
import asyncio
await asyncio.gather(*(lookup({"i": i}) for i in range(5_000)))
