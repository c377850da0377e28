import math

quarterly = {"Q1": 1_250_000, "Q2": 1_410_500, "Q3": 1_302_000, "Q4": 1_698_250}
prev = None
for q, rev in quarterly.items():
    change = "" if prev is None else f"{(rev - prev) / prev:+.2%}"
    print(f"{q} {rev:>12,} {change:>8}")
    prev = rev
vals = list(quarterly.values())
cagr = (vals[-1] / vals[0]) ** (1 / (len(vals) - 1)) - 1
print(f"compound qtr growth: {cagr:.3%}")
print("total:", f"{sum(vals):,}", "| in millions:", f"{sum(vals) / 1e6:.3f}M")
print("floor to 100k:", [math.floor(v / 1e5) * 100_000 for v in vals])
