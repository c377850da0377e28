from datetime import date
from collections import defaultdict

sales = [
    ("2024-01-01", 120.0), ("2024-01-03", 80.5), ("2024-01-08", 42.0),
    ("2024-01-09", 99.9), ("2024-01-14", 10.0), ("2024-01-15", 300.0),
    ("2023-12-31", 55.0),
]

by_week = defaultdict(float)
for day, amount in sales:
    iso = date.fromisoformat(day).isocalendar()
    by_week[(iso.year, iso.week)] += amount

for (year, week), amount in sorted(by_week.items()):
    print(f"{year}-W{week:02d}: {amount:8.2f}")
print(date(2024, 12, 30).isocalendar())
