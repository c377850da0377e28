from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

ny = ZoneInfo("America/New_York")
utc = ZoneInfo("UTC")
start = datetime(2024, 3, 10, 5, 0, tzinfo=utc)  # 00:00 EST

for h in range(5):
    t = (start + timedelta(hours=h)).astimezone(ny)
    print(t.strftime("%Y-%m-%d %H:%M %Z"), t.utcoffset())

before = datetime(2024, 3, 9, 12, 0, tzinfo=ny)
after = datetime(2024, 3, 10, 12, 0, tzinfo=ny)
print("wall difference:", after - before)
print("real difference:", after.astimezone(utc) - before.astimezone(utc))
