from datetime import datetime
from zoneinfo import ZoneInfo

zones = ["America/New_York", "Europe/Berlin", "Asia/Tokyo"]
months = [1, 4, 7, 10]
print("zone".ljust(18), *[f"{datetime(2024, m, 15):%b}".rjust(7) for m in months])
for z in zones:
    tz = ZoneInfo(z)
    row = []
    for m in months:
        off = datetime(2024, m, 15, 12, tzinfo=tz).utcoffset()
        hours = off.total_seconds() / 3600
        row.append(f"{hours:+.1f}".rjust(7))
    print(z.ljust(18), *row)
print("tz key:", ZoneInfo("Asia/Tokyo").key)
