from collections import defaultdict

employees = [
    ("eng", "Ava", 120), ("sales", "Ben", 85), ("eng", "Cal", 135),
    ("ops", "Dee", 90), ("sales", "Eli", 95), ("eng", "Fay", 110),
]
by_dept = defaultdict(list)
for dept, name, salary in employees:
    by_dept[dept].append((name, salary))

for dept in sorted(by_dept):
    people = by_dept[dept]
    avg = sum(s for _, s in people) / len(people)
    names = ", ".join(n for n, _ in sorted(people, key=lambda p: -p[1]))
    print(f"{dept:6} n={len(people)} avg={avg:.1f}k [{names}]")
print("missing dept is empty:", by_dept["legal"], "| now keys:", len(by_dept))
