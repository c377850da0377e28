from datetime import datetime
from zoneinfo import ZoneInfo

meeting_utc = datetime(2024, 5, 20, 14, 0, tzinfo=ZoneInfo("UTC"))
offices = ["America/New_York", "Europe/Berlin", "Asia/Tokyo"]

for name in offices:
    local = meeting_utc.astimezone(ZoneInfo(name))
    print(f"{name:18} {local.strftime('%Y-%m-%d %H:%M %Z')} (UTC{local.strftime('%z')})")

ny = meeting_utc.astimezone(ZoneInfo("America/New_York"))
tokyo = meeting_utc.astimezone(ZoneInfo("Asia/Tokyo"))
print("same instant:", ny == tokyo)
print("tokyo wall clock is next day:", tokyo.date() > ny.date())
