inventory = [
    ("Widget", 120, 2.5),
    ("Gadget Pro", 8, 199.99),
    ("Thingamajig", 45, 12.0),
    ("Doohickey", 0, 7.75),
]

cols = ["Item", "Qty", "Unit", "Value"]
widths = [14, 5, 9, 11]
print("".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cols, widths))))
print("=" * sum(widths))
for name, qty, unit in inventory:
    value = qty * unit
    row = [name.ljust(widths[0]), str(qty).rjust(widths[1]),
           f"{unit:.2f}".rjust(widths[2]), f"{value:,.2f}".rjust(widths[3])]
    print("".join(row))
out_of_stock = [n for n, q, _ in inventory if q == 0]
print("Out of stock:".ljust(20, ".") + ", ".join(out_of_stock))
print("END".center(sum(widths), "*"))
