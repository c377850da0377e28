from datetime import datetime
from zoneinfo import ZoneInfo

berlin = ZoneInfo("Europe/Berlin")
ambiguous = datetime(2024, 10, 27, 2, 30, tzinfo=berlin)
first = ambiguous.replace(fold=0)
second = ambiguous.replace(fold=1)

for label, dt in [("fold=0", first), ("fold=1", second)]:
    print(label, dt.isoformat(), dt.tzname(), dt.astimezone(ZoneInfo("UTC")).isoformat())

print("dst:", first.dst(), "vs", second.dst())
summer = datetime(2024, 7, 1, 12, tzinfo=berlin)
winter = datetime(2024, 1, 1, 12, tzinfo=berlin)
print("summer offset", summer.utcoffset(), "winter offset", winter.utcoffset())
