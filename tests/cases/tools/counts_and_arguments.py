# sluice: tools = [{"name": "search", "allowed_callers": ["code_execution_20260120"], "input_schema": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}}}]
# sluice: answers = {"search": "[1, 2, 3]"}
# sluice: counts = {"rows": 3, "approved": 2.5}
import json, sluice
rows = json.loads(await search("q", limit=3))
sluice.count("rows", len(rows))
sluice.count("approved", 2)
sluice.count("approved", 0.5)
try:
    await search({"bad": {1, 2}})
except TypeError as e:
    print("TypeError:", "JSON" in str(e))
print(sluice.counts())
