from collections import Counter

log = """GET /a 200
GET /b 404
POST /a 201
GET /a 200
GET /c 500
GET /b 404
DELETE /a 204
GET /a 503"""
status = Counter()
per_path = Counter()
for line in log.splitlines():
    method, path, code = line.split()
    status[code[0] + "xx"] += 1
    per_path[(method, path)] += 1

print("by class:", dict(sorted(status.items())))
for (method, path), n in per_path.most_common(2):
    print(f"{method} {path}: {n}")
errors = sum(n for cls, n in status.items() if cls in ("4xx", "5xx"))
print(f"error rate: {errors / status.total():.1%}")
