from datetime import datetime, timezone, timedelta

ist = timezone(timedelta(hours=5, minutes=30), "IST")
pst = timezone(timedelta(hours=-8))
dt = datetime(2024, 1, 15, 18, 45, tzinfo=ist)

print(dt.isoformat(), dt.tzname())
print(dt.astimezone(timezone.utc).isoformat())
print(dt.astimezone(pst).isoformat(), dt.astimezone(pst).tzname())
print(dt.strftime("%Y-%m-%d %H:%M %z"))
print("utc timestamp:", dt.timestamp())
print("from timestamp:", datetime.fromtimestamp(1705324500, tz=timezone.utc))
