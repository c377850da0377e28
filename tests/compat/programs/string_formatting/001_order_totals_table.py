orders = [
    {"id": 1001, "customer": "Acme Corp", "total": 12345.5},
    {"id": 1002, "customer": "Globex", "total": 987.25},
    {"id": 1003, "customer": "Initech LLC", "total": 1500000.0},
    {"id": 1004, "customer": "Umbrella", "total": 42.0},
]

header = f"{'ID':>6} | {'Customer':<14} | {'Total':>14}"
print(header)
print("-" * len(header))
for o in orders:
    print(f"{o['id']:>6} | {o['customer']:<14} | {o['total']:>14,.2f}")
grand = sum(o["total"] for o in orders)
print("-" * len(header))
print(f"{'':>6} | {'GRAND TOTAL':<14} | {grand:>14,.2f}")
