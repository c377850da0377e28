import csv
import io

rows = [
    {"sku": "P1", "name": "Pen", "price": 1.5, "internal_cost": 0.3},
    {"sku": "P2", "name": "Pad", "price": 4.0, "internal_cost": 1.1, "warehouse": "B"},
    {"sku": "P3", "name": "Ink"},
]
buf = io.StringIO()
w = csv.DictWriter(buf, fieldnames=["sku", "name", "price"], extrasaction="ignore",
                   restval="N/A", lineterminator="\n")
w.writeheader()
w.writerows(rows)
print(buf.getvalue(), end="")

strict = csv.DictWriter(io.StringIO(), fieldnames=["sku", "name"])
try:
    strict.writerow({"sku": "P9", "name": "Nib", "price": 0.5})
except ValueError as e:
    print("error:", e)
