values = [0.5, 1.5, 2.5, 3.5, -0.5, -1.5, 2.675, 1.005, 0.125, 0.375]
for v in values:
    print(f"{v!r:>6} round={round(v)!r:>3} round2={round(v, 2)!r:>6} fmt={v:.2f}")
print("round(1234.5678, -2):", round(1234.5678, -2))
print("round(15, -1):", round(15, -1), "round(25, -1):", round(25, -1))
prices = [19.995, 4.125, 0.335]
print("naive cents:", [round(p, 2) for p in prices], "formatted:", [f"{p:.2f}" for p in prices])
print(type(round(2.5)).__name__, type(round(2.5, 0)).__name__)
