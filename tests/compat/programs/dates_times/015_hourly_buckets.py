from datetime import datetime
from collections import Counter

events = [
    "2024-04-01T09:02:11", "2024-04-01T09:45:00", "2024-04-01T10:00:00",
    "2024-04-01T10:59:59", "2024-04-01T10:30:30", "2024-04-01T13:01:02",
    "2024-04-01T13:15:00", "2024-04-01T13:16:00", "2024-04-01T13:59:00",
]

buckets = Counter()
for e in events:
    dt = datetime.fromisoformat(e)
    buckets[dt.replace(minute=0, second=0)] += 1

for hour in sorted(buckets):
    print(hour.strftime("%H:00"), "#" * buckets[hour], buckets[hour])
busiest = max(buckets.items(), key=lambda kv: (kv[1], kv[0]))
print("busiest hour:", busiest[0].strftime("%I %p"), "with", busiest[1], "events")
