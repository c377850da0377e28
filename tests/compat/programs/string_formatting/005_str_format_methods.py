template = "{name:<10} scored {score:>5.1f} ({grade}) on {date}"
results = [
    dict(name="Priya", score=93.456, grade="A", date="2024-03-01"),
    dict(name="Tom", score=71.0, grade="C", date="2024-03-02"),
    dict(name="Li", score=85.25, grade="B", date="2024-03-02"),
]
for r in results:
    print(template.format(**r))

positional = "{0} vs {1}: {0} wins by {2:+d}"
print(positional.format("Red", "Blue", 12))
print(positional.format("Blue", "Red", -3))

summary = "Average: {avg:.3f}, best: {best[name]} ({best[score]:.0f})"
best = max(results, key=lambda r: r["score"])
avg = sum(r["score"] for r in results) / len(results)
print(summary.format(avg=avg, best=best))
