import json
import io

stream = io.StringIO(
    '{"level": "info", "msg": "started", "ms": 3}\n'
    '{"level": "warn", "msg": "slow query", "ms": 812}\n'
    '\n'
    '{"level": "error", "msg": "timeout", "ms": 5000}\n'
    'garbage line\n'
    '{"level": "info", "msg": "done", "ms": 41}\n'
)

good, bad = [], 0
for lineno, line in enumerate(stream, 1):
    if not line.strip():
        continue
    try:
        good.append(json.loads(line))
    except json.JSONDecodeError as e:
        bad += 1
        print(f"line {lineno}: error: {e.msg} at col {e.colno}")

print("parsed", len(good), "bad", bad)
slow = [r["msg"] for r in good if r["ms"] > 500]
print("slow:", slow)
print("levels:", sorted({r["level"] for r in good}))
