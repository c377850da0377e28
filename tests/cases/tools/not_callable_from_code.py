# sluice: tools = [{"name": "send_email", "allowed_callers": ["direct"]}, {"name": "lookup", "allowed_callers": ["code_execution_20250825"]}]
# sluice: answers = {"lookup": "found", "send_email": "sent"}
# sluice: calls = ["send_email", "lookup", "no_such_tool"]
import sluice
try:
    await send_email({"to": "x@example.com"})
except sluice.ToolNotAllowedError as e:
    print("refused:", e.code)
print(await lookup({}))
try:
    await sluice.call_tool("no_such_tool", {})
except sluice.ToolNotAllowedError as e:
    print("unknown:", e.code)
