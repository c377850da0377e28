import csv
import io
from collections import defaultdict

text = """month,category,spend
Jan,travel,320
Jan,food,150
Feb,travel,80
Feb,food,210
Feb,software,99
Mar,food,175
Mar,software,99
"""
pivot = defaultdict(dict)
months = []
for r in csv.DictReader(io.StringIO(text)):
    if r["month"] not in months:
        months.append(r["month"])
    pivot[r["category"]][r["month"]] = int(r["spend"])

print(f"{'category':10}" + "".join(f"{m:>6}" for m in months) + f"{'total':>7}")
for cat in sorted(pivot):
    vals = [pivot[cat].get(m, 0) for m in months]
    print(f"{cat:10}" + "".join(f"{v:6d}" for v in vals) + f"{sum(vals):7d}")
