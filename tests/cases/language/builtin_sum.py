# sluice: cpython = true
# `sum` keeps a machine integer while the items are ints (fast_sum.rs); every way out of that
# path must give what the builtin gives.
print(sum(i * i for i in range(1000)), sum([]), sum([], 5), sum(range(10), start=3))
print(sum([True, True, 1]), sum([], True), sum([True], True), type(sum([True, False])).__name__)
print(sum([2**62, 2**62, -2**62]), sum([2**63 - 1, 1]), sum([-(2**63), -1]), sum([10**30, 1]))
print(sum([1, 2.5]), sum([1.5, 2]), sum([1, 2], 0.5), sum([[1], [2]], []), sum([(1,), (2,)], ()))
from fractions import Fraction
from decimal import Decimal
print(sum([1, Fraction(1, 3)]), sum([Decimal("0.1"), 2]), sum([1, 2], Fraction(1, 2)))


class Cents(int):
    def __add__(self, other):
        return Cents(int(self) + int(other) + 1000)

    __radd__ = __add__


print(sum([1, Cents(2), 3]), sum([Cents(1)], Cents(0)))
for bad in (lambda: sum(["a"], ""), lambda: sum([b"a"], b""), lambda: sum([], bytearray()),
            lambda: sum([1, "a"]), lambda: sum(5), lambda: sum([1], start="x")):
    try:
        bad()
    except TypeError as error:
        print(type(error).__name__, error)


def failing():
    yield 1
    raise ValueError("the iterator failed")


try:
    sum(failing())
except ValueError as error:
    print("ValueError", error)
