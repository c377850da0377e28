from collections import Counter

warehouse = Counter(bolts=120, nuts=80, washers=200, screws=0)
order = Counter(bolts=50, nuts=100, washers=20, rivets=5)

remaining = warehouse - order
shortfall = order - warehouse
print("remaining:", sorted(remaining.items()))
print("shortfall:", sorted(shortfall.items()))
print("combined:", sorted((warehouse + order).items()))
print("overlap min:", sorted((warehouse & order).items()))
print("max union:", sorted((warehouse | order).items()))
w = warehouse.copy()
w.subtract(order)
print("subtract keeps negatives:", sorted(w.items()))
