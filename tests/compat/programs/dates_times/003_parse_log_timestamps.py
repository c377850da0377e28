from datetime import datetime

lines = [
    "12/Mar/2024:08:15:02 +0000 GET /api/users 200",
    "12/Mar/2024:08:15:09 +0000 POST /api/orders 201",
    "12/Mar/2024:08:17:44 +0000 GET /api/orders/17 404",
    "12/Mar/2024:08:21:30 +0000 DELETE /api/orders/17 204",
]

parsed = []
for line in lines:
    stamp, tz, method, path, status = line.split()
    dt = datetime.strptime(f"{stamp} {tz}", "%d/%b/%Y:%H:%M:%S %z")
    parsed.append((dt, method, path, int(status)))

first, last = parsed[0][0], parsed[-1][0]
print("window:", first.isoformat(), "->", last.isoformat())
print("span seconds:", (last - first).total_seconds())
for (a, *_), (b, m, p, s) in zip(parsed, parsed[1:]):
    print(f"+{int((b - a).total_seconds()):4d}s {m:6} {p} {s}")
