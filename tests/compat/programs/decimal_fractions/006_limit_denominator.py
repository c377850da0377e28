from fractions import Fraction
import math

for value in [math.pi, math.e, 0.333333, 1.41421356, 0.1]:
    f = Fraction(value)
    print(f"{value!r:>20} -> {f.limit_denominator(10)!s:>6} {f.limit_denominator(1000)!s:>10}")
print("exact 0.1:", Fraction(0.1))
print("from string:", Fraction("0.1"), Fraction("3/12"), Fraction("-1.25e-1"))
print("ratio:", (0.75).as_integer_ratio(), Fraction(1, 3).as_integer_ratio())
