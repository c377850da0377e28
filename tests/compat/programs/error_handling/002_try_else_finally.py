def parse_amount(text):
    steps = []
    try:
        steps.append("try")
        value = float(text.replace(",", ""))
    except ValueError:
        steps.append("except")
        value = None
    else:
        steps.append("else")
        value = round(value, 2)
    finally:
        steps.append("finally")
    return value, steps

for raw in ["1,234.567", "abc", "  42 ", "1e3"]:
    value, steps = parse_amount(raw)
    print(f"{raw!r:>12} -> {value!s:>8}  {' > '.join(steps)}")

def early_return():
    try:
        return "from try"
    finally:
        print("finally runs before return completes")

print(early_return())
