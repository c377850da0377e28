from datetime import date, timedelta

def week_bounds(d):
    monday = d - timedelta(days=d.weekday())
    return monday, monday + timedelta(days=6)

for s in ["2024-01-01", "2024-02-29", "2024-06-16", "2024-12-31"]:
    d = date.fromisoformat(s)
    a, b = week_bounds(d)
    y, w, wd = d.isocalendar()
    print(f"{s} ({d:%a}) week {y}-W{w:02d}: {a:%b %d} - {b:%b %d}")

print(date.fromisocalendar(2024, 1, 1), date.fromisocalendar(2020, 53, 7))
