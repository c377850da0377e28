from itertools import tee, pairwise, filterfalse

prices = [100.0, 102.5, 101.0, 105.25, 104.0, 110.0]

a, b = tee(prices)
changes = [round(y - x, 2) for x, y in zip(a, list(b)[1:])]
print("changes:", changes)

pct = [f"{(y - x) / x:+.2%}" for x, y in pairwise(prices)]
print("pct:", pct)

ups = list(filter(lambda c: c > 0, changes))
downs = list(filterfalse(lambda c: c > 0, changes))
print("ups:", ups, "downs:", downs)
streak = max_streak = 0
for c in changes:
    streak = streak + 1 if c > 0 else 0
    max_streak = max(max_streak, streak)
print("longest up streak:", max_streak)
