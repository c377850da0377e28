from datetime import date, datetime

readings = ["2024-001", "2024-060", "2024-366", "2023-365", "2024-100"]
for r in readings:
    d = datetime.strptime(r, "%Y-%j").date()
    print(r, "->", d.isoformat(), d.strftime("%A"))

d = date(2024, 3, 1)
print("ordinal:", d.toordinal(), "back:", date.fromordinal(d.toordinal()))
print("day of year:", d.timetuple().tm_yday)
print("days until new year:", (date(2025, 1, 1) - d).days)
