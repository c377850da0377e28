import re

report = """\
SKU      DESCRIPTION            QTY    PRICE
A-100    Blue widget              4    12.50
B-220    Gadget, large           10     3.99
C-003    Cable 2m                 1   149.00
"""
lines = report.splitlines()
width = max(map(len, lines))
padded = [l.ljust(width) for l in lines]
# a column boundary is any position that is blank on every line
blank = "".join(" " if all(l[i] == " " for l in padded) else "x" for i in range(width))
bounds = [m.span() for m in re.finditer(r"x+", blank)]
names = [padded[0][a:b].strip().lower() for a, b in bounds]
rows = [{n: line[a:b].strip() for n, (a, b) in zip(names, bounds)} for line in padded[1:]]
for r in rows:
    print(r)
print("value:", round(sum(int(r["qty"]) * float(r["price"]) for r in rows), 2))
