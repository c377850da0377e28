from datetime import datetime, timezone

stamps = [0, 86400, 1000000000, 1234567890, 1700000000, 2147483647]
for s in stamps:
    dt = datetime.fromtimestamp(s, tz=timezone.utc)
    print(f"{s:>11} {dt:%Y-%m-%d %H:%M:%S %Z} {dt.strftime('%A')}")

dt = datetime(2038, 1, 19, 3, 14, 8, tzinfo=timezone.utc)
print("int32 overflow at:", int(dt.timestamp()))
print("ms precision:", datetime(2024, 1, 1, 0, 0, 0, 250000, tzinfo=timezone.utc).timestamp())
