rows = [("cpu", 0.8734), ("memory", 0.42), ("disk", 0.0567)]

for width in (8, 12):
    for precision in (1, 3):
        for name, val in rows:
            print(f"[{name:^{width}}] {val:{width}.{precision}%}")
        print("-" * 20)

align = ">"
fill = "."
print(f"{'total':{fill}{align}20}")
print("{:{}{}{}}".format("x", "*", "^", 9))
