from datetime import datetime
from zoneinfo import ZoneInfo

events = [
    ("standup", datetime(2024, 11, 4, 9, 0, tzinfo=ZoneInfo("America/New_York"))),
    ("review", datetime(2024, 11, 4, 15, 0, tzinfo=ZoneInfo("Europe/Berlin"))),
    ("retro", datetime(2024, 11, 4, 23, 30, tzinfo=ZoneInfo("Asia/Tokyo"))),
    ("deploy", datetime(2024, 11, 4, 13, 0, tzinfo=ZoneInfo("UTC"))),
]

utc = ZoneInfo("UTC")
ordered = sorted(events, key=lambda e: e[1])
for name, dt in ordered:
    print(f"{dt.astimezone(utc):%H:%M}Z {name:8} local {dt:%H:%M %Z}")
gaps = [b[1] - a[1] for a, b in zip(ordered, ordered[1:])]
print("gaps:", [str(g) for g in gaps])
