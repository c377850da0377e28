from collections import Counter

before = Counter({"requests": 3, "numpy": 1, "pandas": 2, "flask": 1})
after = Counter({"requests": 3, "numpy": 2, "pandas": 0, "django": 1})

added = after - before
removed = before - after
print("added:", sorted(added.items()))
print("removed:", sorted(removed.items()))
print("unchanged:", sorted(k for k in before.keys() & after.keys() if before[k] == after[k]))
print("before <= before+after:", before <= before + after)
print("after is subset of before:", after <= before)
