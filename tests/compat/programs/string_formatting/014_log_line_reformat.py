raw_logs = [
    "2024-05-01T10:00:01 GET /api/users 200 12ms",
    "2024-05-01T10:00:02 POST /api/orders 201 148ms",
    "2024-05-01T10:00:05 GET /api/orders/99 404 3ms",
    "2024-05-01T10:00:09 DELETE /api/users/7 500 1022ms",
]

for line in raw_logs:
    ts, method, path, status, dur = line.split()
    ms = int(dur.removesuffix("ms"))
    flag = "SLOW" if ms > 500 else ("ERR" if int(status) >= 400 else "")
    print(f"{ts[11:]} {method:<6} {path:<18} {status} {ms:>6,d}ms {flag}".rstrip())

total_ms = sum(int(l.split()[-1][:-2]) for l in raw_logs)
print(f"{len(raw_logs)} requests, {total_ms / len(raw_logs):.1f}ms avg")
