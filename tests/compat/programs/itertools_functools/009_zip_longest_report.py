from itertools import zip_longest

q1 = ["alpha", "beta", "gamma", "delta"]
q2 = ["beta", "epsilon"]
q3 = ["gamma", "zeta", "eta"]

print(f"{'Q1':8}{'Q2':8}{'Q3':8}")
for row in zip_longest(q1, q2, q3, fillvalue="-"):
    print("".join(f"{c:8}" for c in row))

a = [1, 2, 3, 4]
b = [10, 20]
print("sum padded:", [x + y for x, y in zip_longest(a, b, fillvalue=0)])
print("truncated zip:", list(zip(a, b)))
