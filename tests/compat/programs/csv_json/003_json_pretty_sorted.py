import json

payload = {
    "user": {"name": "Mina", "id": 42, "roles": ["admin", "dev"]},
    "meta": {"version": "1.2", "count": 3},
    "active": True,
    "score": None,
}
print(json.dumps(payload, indent=2, sort_keys=True))
print(json.dumps(payload, separators=(",", ":"), sort_keys=True))
