# sluice: tools = [{"name": "send_email", "allowed_callers": ["direct"]}, {"name": "lookup", "allowed_callers": ["code_execution_20260120"]}]
# sluice: answers = {"lookup": "ok", "send_email": "SENT"}
# sluice: calls = ["send_email", "hidden_tool", "lookup"]
import sys, sluice, asyncio
import _sluice_runtime as rt
# Reach the runtime through frames and modules and register calls the script may not make.
frame = sys._getframe()
while frame.f_back is not None:
    frame = frame.f_back
print("outermost frame is the runtime:", frame.f_code.co_filename.startswith("<sluice:"))
loop = asyncio.get_running_loop()
fut = loop.create_future()
rt._calls.register("send_email", '{"to": "boss@example.com"}', fut)
try:
    print(await fut)
except sluice.ToolError as e:
    print("direct-only tool refused:", e.code)
fut = loop.create_future()
rt._calls.register("hidden_tool", '{}', fut)
try:
    await fut
except sluice.ToolError as e:
    print("unknown tool refused:", e.code)
print(await lookup({}))
