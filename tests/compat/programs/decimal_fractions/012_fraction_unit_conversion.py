from fractions import Fraction

INCH = Fraction(254, 100)  # cm
conversions = {"ft": 12 * INCH, "yd": 36 * INCH, "in": INCH, "mi": 63360 * INCH}
measures = [("3", "ft"), ("1/2", "in"), ("2 1/4", "yd"), ("0.25", "mi")]

def parse(s):
    parts = s.split()
    return sum((Fraction(p) for p in parts), Fraction(0))

for raw, unit in measures:
    qty = parse(raw)
    cm = qty * conversions[unit]
    print(f"{raw:>6} {unit} = {cm} cm = {float(cm):.2f} cm")
print("ft per mile exact:", conversions["mi"] / conversions["ft"])
