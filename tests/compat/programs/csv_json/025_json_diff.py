import json

old = json.loads('{"name": "svc", "port": 80, "tags": ["a", "b"], "limits": {"cpu": 1, "mem": 512}}')
new = json.loads('{"name": "svc", "port": 8080, "tags": ["a", "b"], "limits": {"cpu": 2}, "owner": "ops"}')

def diff(a, b, path=""):
    out = []
    for k in sorted(set(a) | set(b)):
        p = f"{path}.{k}" if path else k
        if k not in a:
            out.append(f"+ {p} = {json.dumps(b[k])}")
        elif k not in b:
            out.append(f"- {p}")
        elif isinstance(a[k], dict) and isinstance(b[k], dict):
            out.extend(diff(a[k], b[k], p))
        elif a[k] != b[k]:
            out.append(f"~ {p}: {json.dumps(a[k])} -> {json.dumps(b[k])}")
    return out

for line in diff(old, new):
    print(line)
