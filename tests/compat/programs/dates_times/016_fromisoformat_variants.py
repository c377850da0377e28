from datetime import date, datetime, time

values = ["2024-02-29", "2024-02-29T23:59:59", "2024-02-29 08:00",
          "2024-02-29T08:00:00+05:30", "2024-02-29T08:00:00.123456"]
for v in values:
    dt = datetime.fromisoformat(v)
    print(f"{v:30} -> {dt!r}")

print(date.fromisoformat("2024-12-01").strftime("%d.%m.%Y"))
print(time.fromisoformat("07:05:09").strftime("%I:%M:%S %p"))
print(datetime.fromisoformat("2024-02-29T23:30:00").date() + (date(2024, 3, 1) - date(2024, 2, 29)))
