from datetime import date

orders = [
    {"id": "A100", "placed": "2024-01-15", "shipped": "2024-01-18"},
    {"id": "A101", "placed": "2024-02-27", "shipped": "2024-03-02"},
    {"id": "A102", "placed": "2023-12-30", "shipped": "2024-01-04"},
    {"id": "A103", "placed": "2024-03-10", "shipped": "2024-03-10"},
]

total = 0
for o in orders:
    placed = date.fromisoformat(o["placed"])
    shipped = date.fromisoformat(o["shipped"])
    days = (shipped - placed).days
    total += days
    print(f"{o['id']}: {days} day(s) to ship")

print("average days to ship:", round(total / len(orders), 2))
