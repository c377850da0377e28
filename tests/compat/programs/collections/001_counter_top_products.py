from collections import Counter

orders = [
    {"id": 1, "items": ["apple", "banana", "apple"]},
    {"id": 2, "items": ["cherry", "apple"]},
    {"id": 3, "items": ["banana", "banana", "date"]},
    {"id": 4, "items": ["apple", "elderberry"]},
]
counts = Counter()
for o in orders:
    counts.update(o["items"])

for item, n in counts.most_common(3):
    print(f"{item:12} {n}")
print("total items:", counts.total())
print("distinct:", len(counts), "| singles:", sorted(k for k, v in counts.items() if v == 1))
