import json

doc = json.loads("""
{"id": 7, "user": {"name": "Lee", "address": {"city": "Lima", "zip": "15001"}},
 "items": [{"sku": "X", "qty": 1}, {"sku": "Y", "qty": 4}], "paid": false}
""")

def flatten(obj, prefix=""):
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{prefix}{i}."))
    else:
        out[prefix[:-1]] = obj
    return out

for key, value in flatten(doc).items():
    print(f"{key:22} = {json.dumps(value)}")
