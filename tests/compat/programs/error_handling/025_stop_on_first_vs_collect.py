def check(order):
    if order["qty"] <= 0:
        raise ValueError(f"order {order['id']}: qty must be positive")
    if order["price"] < 0:
        raise ValueError(f"order {order['id']}: negative price")
    if order["currency"] not in ("USD", "EUR"):
        raise LookupError(f"order {order['id']}: unsupported currency {order['currency']}")

orders = [
    {"id": 1, "qty": 2, "price": 9.5, "currency": "USD"},
    {"id": 2, "qty": 0, "price": 4.0, "currency": "USD"},
    {"id": 3, "qty": 1, "price": -1.0, "currency": "EUR"},
    {"id": 4, "qty": 5, "price": 2.0, "currency": "JPY"},
]

try:
    for o in orders:
        check(o)
except (ValueError, LookupError) as e:
    print("fail-fast stopped at:", e)

problems = []
for o in orders:
    try:
        check(o)
    except (ValueError, LookupError) as e:
        problems.append(e)
print(f"collected {len(problems)} problems:")
for p in problems:
    print(f"  {type(p).__name__}: {p}")
if problems:
    eg = ExceptionGroup("order validation", problems)
    print(eg, "->", [type(e).__name__ for e in eg.exceptions])
