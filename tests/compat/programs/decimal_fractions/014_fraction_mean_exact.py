from fractions import Fraction
import statistics

scores = [Fraction(7, 10), Fraction(2, 3), Fraction(5, 6), Fraction(1, 2)]
print("exact mean:", statistics.mean(scores))
print("exact median:", statistics.median(scores))
total = sum(scores)
print("sum:", total, "| float:", float(total), "| round 3:", round(total, 3))
print("compare:", Fraction(1, 3) < 0.34, Fraction(1, 2) == 0.5, Fraction(2, 4) is not None)
print("floor/ceil:", Fraction(-7, 2).__floor__(), Fraction(-7, 2).__ceil__(), int(Fraction(-7, 2)))
print("pow:", Fraction(2, 3) ** 3, Fraction(4, 9) ** Fraction(1, 2))
