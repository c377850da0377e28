from collections import Counter

ratings = [5, 4, 4, 3, 5, 5, 1, 2, 4, 5, 3, 4, 5]
c = Counter(ratings)
for stars in range(5, 0, -1):
    print(f"{stars}* {'=' * c[stars]:<6} {c[stars]}")
mean = sum(c.elements()) / c.total()
print(f"mean {mean:.2f} mode {c.most_common(1)[0][0]}")
print("sorted elements:", sorted(c.elements())[:6])
c[6] += 0
print("with zero entry:", len(c), "after +c:", len(+c))
