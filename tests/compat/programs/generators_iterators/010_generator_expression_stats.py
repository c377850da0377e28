orders = [
    {"id": 1, "status": "paid", "total": 120.0, "items": 3},
    {"id": 2, "status": "refunded", "total": 45.5, "items": 1},
    {"id": 3, "status": "paid", "total": 310.25, "items": 7},
    {"id": 4, "status": "pending", "total": 18.0, "items": 1},
    {"id": 5, "status": "paid", "total": 89.99, "items": 2},
]

paid_total = sum(o["total"] for o in orders if o["status"] == "paid")
max_items = max(o["items"] for o in orders)
any_pending = any(o["status"] == "pending" for o in orders)
all_positive = all(o["total"] > 0 for o in orders)
first_big = next((o["id"] for o in orders if o["total"] > 200), None)
first_huge = next((o["id"] for o in orders if o["total"] > 1000), None)

print(f"paid total: {paid_total:.2f}")
print("max items:", max_items, "| any pending:", any_pending, "| all positive:", all_positive)
print("first >200:", first_big, "| first >1000:", first_huge)
print("statuses:", sorted({o["status"] for o in orders}))
print("avg items:", sum(o["items"] for o in orders) / len(orders))
