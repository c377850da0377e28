# sluice: answers = {"charge": [{"is_error": true, "content": "card declined"}, "ok"]}
import sluice
try:
    await charge({"amount": 5})
except sluice.ToolError as e:
    print("caught", type(e).__name__, e.code, str(e))
print(await charge({"amount": 5}))
