import io
import csv

rows = [
    {"sku": "A-1", "name": "Bolt, steel", "price": 0.1, "qty": 12000},
    {"sku": "B-22", "name": 'Nut "hex"', "price": 0.05, "qty": 30000},
    {"sku": "C-303", "name": "Washer", "price": 0.025, "qty": 5000},
]

buf = io.StringIO()
writer = csv.DictWriter(buf, fieldnames=["sku", "name", "price", "qty", "value"], lineterminator="\n")
writer.writeheader()
for r in rows:
    writer.writerow({**r, "price": f"{r['price']:.3f}", "value": f"{r['price'] * r['qty']:.2f}"})
print(buf.getvalue(), end="")
print(f"-- {len(rows)} rows, {len(buf.getvalue()):,} bytes")
