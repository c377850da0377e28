jobs = [
    {"name": "ingest", "done": 1500, "total": 1500},
    {"name": "transform", "done": 732, "total": 1500},
    {"name": "export", "done": 0, "total": 1500},
]

def bar(fraction, width=20):
    filled = int(fraction * width)
    return "[" + "=" * filled + ">" * (filled < width) + " " * (width - filled - (filled < width)) + "]"

for job in jobs:
    frac = job["done"] / job["total"]
    print(f"{job['name']:<10} {bar(frac)} {frac:6.1%} ({job['done']:,}/{job['total']:,})")

overall = sum(j["done"] for j in jobs) / sum(j["total"] for j in jobs)
print(f"Overall: {overall:.2%}")
