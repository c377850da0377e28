from datetime import timedelta

sessions = [
    ("alice", timedelta(hours=1, minutes=45)),
    ("bob", timedelta(minutes=50, seconds=30)),
    ("alice", timedelta(hours=2, minutes=5, seconds=15)),
    ("carol", timedelta(days=1, hours=1)),
    ("bob", timedelta(minutes=9, seconds=45)),
]

RATE_PER_HOUR = 42.0
totals = {}
for user, dur in sessions:
    totals[user] = totals.get(user, timedelta()) + dur

for user in sorted(totals):
    dur = totals[user]
    hours = dur / timedelta(hours=1)
    print(f"{user:6} {str(dur):>16} {hours:7.3f}h ${hours * RATE_PER_HOUR:9.2f}")

grand = sum(totals.values(), timedelta())
print("total:", grand, "| seconds:", int(grand.total_seconds()))
print("half:", grand / 2, "| floor-div 3h blocks:", grand // timedelta(hours=3))
