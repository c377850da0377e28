from collections import Counter

def convert(value):
    if value is None:
        raise TypeError("value is None")
    if isinstance(value, str) and not value.strip():
        raise ValueError("empty string")
    return 100 / float(value)

values = ["4", "0", None, "x", "", "2.5", 8, "1e400", None, "0.0"]
errors = Counter()
examples = {}
good = []
for v in values:
    try:
        good.append(round(convert(v), 3))
    except Exception as e:
        name = type(e).__name__
        errors[name] += 1
        examples.setdefault(name, str(e))
print("good:", good)
for name, n in errors.most_common():
    print(f"{name:<18} x{n}  e.g. {examples[name]!r}")
print("error rate:", f"{sum(errors.values()) / len(values):.0%}")
