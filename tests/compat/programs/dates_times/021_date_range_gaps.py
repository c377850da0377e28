from datetime import date, timedelta

seen = ["2024-05-01", "2024-05-02", "2024-05-05", "2024-05-06",
        "2024-05-07", "2024-05-11", "2024-05-12"]
days = sorted(date.fromisoformat(s) for s in seen)
present = set(days)

missing = []
d = days[0]
while d <= days[-1]:
    if d not in present:
        missing.append(d)
    d += timedelta(days=1)

print("missing days:", [m.isoformat() for m in missing])
runs, run_start = [], days[0]
for prev, cur in zip(days, days[1:]):
    if cur - prev > timedelta(days=1):
        runs.append((run_start, prev))
        run_start = cur
runs.append((run_start, days[-1]))
for a, b in runs:
    print(f"run {a:%b %d}..{b:%b %d} ({(b - a).days + 1} days)")
