import json

values = [0.1 + 0.2, 1e16, 1.5e-7, 100.0, 2 / 3, -0.0, 123456789.123456789, 1e300 * 10]
for v in values:
    print(repr(v), "->", json.dumps(v))

print(json.loads("[1.0, 2.50, 3e2, 1E-3, 10]"))
print(json.dumps([float("nan"), float("inf")]))
print(json.loads("NaN"), json.loads("-Infinity"))
print(json.dumps({"pi": 3.141592653589793, "rounded": round(3.14159, 2)}))
