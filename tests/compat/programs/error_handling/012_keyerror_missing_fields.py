payloads = [
    {"user": {"id": 7, "profile": {"city": "Lyon"}}},
    {"user": {"id": 8}},
    {"account": {}},
]

def city_of(p):
    return p["user"]["profile"]["city"]

for p in payloads:
    try:
        print("city:", city_of(p))
    except KeyError as e:
        print(f"KeyError -> missing {e.args[0]!r} (str: {e})")

def safe_get(d, *path, default=None):
    for key in path:
        try:
            d = d[key]
        except (KeyError, TypeError, IndexError):
            return default
    return d

print([safe_get(p, "user", "profile", "city", default="?") for p in payloads])
print(safe_get({"a": [1, 2]}, "a", 5, default="no index"), safe_get({"a": [1, 2]}, "a", 1))
