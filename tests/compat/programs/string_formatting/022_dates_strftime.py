from datetime import date, datetime, timedelta

start = datetime(2024, 2, 27, 9, 5, 3)
for i in range(4):
    d = start + timedelta(days=i, hours=i * 7)
    print(f"{d:%Y-%m-%d %H:%M} | {d:%a %d %b} | week {d:%W} | {d.isoformat()}")

deadline = date(2024, 12, 31)
print(f"Deadline: {deadline:%A, %B %d, %Y}")
print("Formatted via str.format: {:%d/%m/%y}".format(deadline))
span = date(2024, 12, 31) - date(2024, 1, 1)
print(f"Days in span: {span.days:,}")
