prices = {"apple": 0.5, "banana": 0.25, "cherry": 3.0}
order = ["apple", "kiwi", "cherry", "banana", "durian"]
qtys = [4, 2, 1]

total = 0.0
for i, item in enumerate(order):
    try:
        qty = qtys[i]
    except IndexError:
        qty = 1
        print(f"no qty for {item!r} at position {i}, defaulting to 1")
    try:
        total += prices[item] * qty
    except KeyError as missing:
        print(f"unknown product {missing}; skipped")
print(f"total: {total:.2f}")

try:
    [].pop()
except IndexError as e:
    print("IndexError:", e)
try:
    {}.popitem()
except KeyError as e:
    print("KeyError:", e)
try:
    "abc".index("z")
except ValueError as e:
    print("ValueError:", e)
