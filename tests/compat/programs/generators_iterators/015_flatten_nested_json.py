def flatten(obj, prefix=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from flatten(v, f"{prefix}.{k}" if prefix else k)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from flatten(v, f"{prefix}[{i}]")
    else:
        yield prefix, obj

response = {
    "user": {"id": 42, "name": "Zoe", "emails": ["z@a.test", "zoe@b.test"]},
    "plan": {"tier": "pro", "limits": {"seats": 10, "storage_gb": 500}},
    "flags": [],
    "active": True,
}
flat = dict(flatten(response))
for key, value in flat.items():
    print(f"{key:<22} = {value!r}")
print(len(flat), "leaf values")
