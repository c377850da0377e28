import json

original = {"tuple": (1, 2), "int_keys": {1: "a", 2: "b"}, "nested": [[1, [2, [3]]]],
            "unicode": "café ☕", "bool": False, "none": None}
text = json.dumps(original)
print(text)
print(json.dumps(original, ensure_ascii=False))
back = json.loads(text)
print("equal after roundtrip:", back == original)
print("tuple became:", type(back["tuple"]).__name__, "keys became:", list(back["int_keys"]))
