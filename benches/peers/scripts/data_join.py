import json

orders = [{"id": i, "customer": i % 500, "cents": (i * 37) % 1000, "sku": f"SKU{i % 97}"} for i in range(10000)]
customers = [{"id": c, "region": ["north", "south", "east", "west"][c % 4], "tier": c % 3} for c in range(500)]

totals = {}
for order in orders:
    total = totals.get(order["customer"])
    if total is None:
        total = {"orders": 0, "cents": 0}
        totals[order["customer"]] = total
    total["orders"] += 1
    total["cents"] += order["cents"]

by_id = {c["id"]: c for c in customers}
joined = [
    {"customer": cid, "region": by_id[cid]["region"], "tier": by_id[cid]["tier"], **total}
    for cid, total in totals.items()
]
regions = {}
for row in joined:
    regions[row["region"]] = regions.get(row["region"], 0) + row["cents"]

text = json.dumps({"orders": orders, "joined": joined})
back = json.loads(text)
print(len(text), len(back["orders"]), len(back["joined"]), sorted(regions.items()))
