# Float totals are compensated as in CPython 3.12+ ("sum() now uses Neumaier summation"), so
# not checked against this machine's python3; the expected lines are 3.12's.
print(sum([0.1] * 10), sum([0.1] * 10) == 1.0, sum([1e100, 1.0, -1e100, 1.0]))
print(sum([0.1, 1, 0.2, True]), sum([1, 2, 0.1, 0.2]), sum([0.1, 0.2], 0.3))
print(sum([float("inf"), 1.0]), sum([float("inf"), float("-inf")]), sum([1e308, 1e308]))
print(sum([-0.0, -0.0], -0.0), sum([-0.0]), sum([], 0.5), sum([0.5, 10**30]))
from fractions import Fraction
print(sum([0.5, Fraction(1, 4)]), sum([0.5, 1j]), sum([0.25, 2**70]))
