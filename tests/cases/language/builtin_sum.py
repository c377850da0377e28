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

# A generator is resumed directly (fast_sum.rs): every way it can end or fail is the protocol's.
def stopping():
    yield 2
    raise StopIteration("inside")


try:
    sum(stopping())
except RuntimeError as error:
    print("RuntimeError", error, type(error.__cause__).__name__)
partly = (i for i in range(10))
next(partly), next(partly)
print(sum(partly), sum(partly), sum(i for i in ()))
print(sum(x for x in [1, 2.5, 3]), sum((x for x in [[1], [2]]), []), sum((x for x in [1, 2]), 0.5))


def reentrant():
    yield 1
    yield sum(self_ref)


self_ref = reentrant()
try:
    sum(self_ref)
except ValueError as error:
    print("ValueError", error)
try:
    sum(1, "a")
except TypeError as error:
    print("TypeError", error)
try:
    sum((x for x in [1, "a"]))
except TypeError as error:
    print("TypeError", error)
# Products at the edges of the 32-bit fast path and of a machine int, through a generator.
edges = [2**31 - 1, -2**31, 2**31, 2**32, 2**62, -2**63, 3]
print(sum(a * b for a in edges for b in edges))
print([a * b for a in edges for b in edges][:20])
