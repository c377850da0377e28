import math

line_items = [0.1] * 10 + [0.2, 0.3, 1e-9]
naive = sum(line_items)
exact = math.fsum(line_items)
print("naive sum:", naive)
print("fsum:", exact)
print("naive == 1.5:", naive == 1.5 + 1e-9, "| isclose:", math.isclose(naive, 1.5 + 1e-9))
print("abs_tol needed:", math.isclose(1e-12, 0.0), math.isclose(1e-12, 0.0, abs_tol=1e-9))
print("rel_tol 1%:", math.isclose(100, 100.9, rel_tol=0.01), math.isclose(100, 101.5, rel_tol=0.01))
print(0.1 + 0.2 == 0.3, math.isclose(0.1 + 0.2, 0.3))
