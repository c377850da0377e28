import json

responses = [
    '{"status": "ok", "items": [1, 2, 3]}',
    '{"status": "ok", "items": [1, 2,]}',
    '',
    '{"status": "error", "message": "quota exceeded"}',
    '[1, 2',
]
for i, text in enumerate(responses):
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        print(f"#{i} invalid JSON at line {e.lineno} col {e.colno}: {e.msg}")
        continue
    if data.get("status") != "ok":
        print(f"#{i} API error: {data.get('message', 'unknown')}")
        continue
    print(f"#{i} ok, {len(data['items'])} items, sum={sum(data['items'])}")
print(issubclass(json.JSONDecodeError, ValueError))
