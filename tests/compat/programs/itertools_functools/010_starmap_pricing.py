from itertools import starmap
from operator import mul

line_items = [(3, 9.99), (1, 149.0), (12, 0.25), (2, 19.5)]
subtotals = list(starmap(mul, line_items))
print("subtotals:", [round(s, 2) for s in subtotals])
print("total:", round(sum(subtotals), 2))

def describe(name, qty, unit):
    return f"{qty} x {name} @ {unit:.2f}"

rows = [("pen", 3, 1.2), ("notebook", 2, 4.75)]
for s in starmap(describe, rows):
    print(s)
print(list(starmap(pow, [(2, 5), (3, 2), (10, 3)])))
