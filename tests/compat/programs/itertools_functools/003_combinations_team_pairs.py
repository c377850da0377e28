from itertools import combinations

skills = {"ana": {"python", "sql"}, "ben": {"go", "sql"}, "cy": {"python", "rust"},
          "dee": {"sql", "rust", "go"}}

pairs = []
for a, b in combinations(sorted(skills), 2):
    coverage = skills[a] | skills[b]
    pairs.append((len(coverage), a, b, sorted(coverage)))

for n, a, b, cov in sorted(pairs, key=lambda p: (-p[0], p[1], p[2])):
    print(f"{a}+{b}: {n} skills {cov}")
print("triples:", len(list(combinations(skills, 3))))
