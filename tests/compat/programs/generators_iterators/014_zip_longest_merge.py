from itertools import zip_longest, starmap, compress
from operator import mul

names = ["widget", "gadget", "gizmo", "doohickey"]
prices = [2.5, 10.0, 7.25]
qtys = [4, 1, 3, 2]

for name, price, qty in zip_longest(names, prices, qtys, fillvalue=0):
    print(f"{name:<10} {price:>6.2f} x {qty}")

line_totals = list(starmap(mul, zip(prices, qtys)))
print("line totals:", line_totals)
in_stock = [q > 1 for q in qtys]
print("in stock (qty>1):", list(compress(names, in_stock)))
try:
    list(zip(names, prices, strict=True))
except ValueError as e:
    print("strict zip failed:", type(e).__name__)
