from collections import defaultdict

movements = [("sku1", +50), ("sku2", +20), ("sku1", -15), ("sku3", +5),
             ("sku2", -25), ("sku1", -5), ("sku3", -5)]
stock = defaultdict(int)
low = []
for sku, delta in movements:
    stock[sku] += delta
    if stock[sku] < 0:
        low.append((sku, stock[sku]))

for sku, qty in sorted(stock.items()):
    print(f"{sku}: {qty:4d}{'  <-- negative' if qty < 0 else ''}")
print("went negative:", low)
print("zeroed:", [s for s, q in stock.items() if q == 0])
