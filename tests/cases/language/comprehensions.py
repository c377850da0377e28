# sluice: cpython = true
rows = [{"dept": d, "n": n} for d in "abc" for n in range(3)]
by_dept = {d: [r["n"] for r in rows if r["dept"] == d] for d in sorted({r["dept"] for r in rows})}
print(by_dept)
matrix = [[i * j for j in range(4)] for i in range(3)]
print([list(col) for col in zip(*matrix)])
print({n: n ** 2 for n in range(5) if n != 2})
print(sorted({c.upper() for c in "hello"}))
print([y for x in range(4) if (y := x * 3) > 3])
