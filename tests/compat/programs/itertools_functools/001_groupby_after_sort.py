from itertools import groupby
from operator import itemgetter

orders = [
    {"customer": "globex", "total": 120.0}, {"customer": "acme", "total": 50.5},
    {"customer": "initech", "total": 75.0}, {"customer": "acme", "total": 20.0},
    {"customer": "globex", "total": 310.25}, {"customer": "acme", "total": 99.5},
]
orders.sort(key=itemgetter("customer"))
for customer, group in groupby(orders, key=itemgetter("customer")):
    totals = [o["total"] for o in group]
    print(f"{customer:8} orders={len(totals)} sum={sum(totals):8.2f} max={max(totals):7.2f}")

unsorted = [1, 1, 2, 1, 1, 3, 3]
print("runs:", [(k, len(list(g))) for k, g in groupby(unsorted)])
