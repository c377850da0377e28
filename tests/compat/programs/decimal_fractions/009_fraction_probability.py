from fractions import Fraction
from itertools import product

dice = range(1, 7)
outcomes = list(product(dice, repeat=2))
p_sum7 = Fraction(sum(1 for a, b in outcomes if a + b == 7), len(outcomes))
p_double = Fraction(sum(1 for a, b in outcomes if a == b), len(outcomes))
p_either = p_sum7 + p_double  # disjoint events
print("P(sum=7) =", p_sum7)
print("P(double) =", p_double)
print("P(sum=7 or double) =", p_either, f"({float(p_either):.4f})")
ev = sum(Fraction(a + b) for a, b in outcomes) / len(outcomes)
print("expected sum:", ev)
print("P(no six in 4 rolls):", Fraction(5, 6) ** 4, "->", Fraction(1) - Fraction(5, 6) ** 4)
