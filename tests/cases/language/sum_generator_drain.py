# sluice: cpython = true
# `sum` takes a generator's items where it yields them (PyGenerator::drain, fast_sum.rs): the
# generator never suspends between items it can add without Python. Everything a script can
# see of that must be what the usual protocol gives.
import sys
import traceback
from decimal import Decimal
from fractions import Fraction

print(sum(i * i for i in range(1_000_000)), sum(x for x in ()), sum((x for x in [1, 2]), 10))
# Declined items: an int past a machine word, a float (the float phase drains the rest), and
# types only `+` can add, after which the generator is read item by item to its end.
print(sum(x for x in [1, 2, 2**63, 4]), sum(v for v in [1, 2, 3.5, 4, 5.25]))
print(sum(x for x in [1, Fraction(1, 3), 2]), sum(x for x in [0.5, Decimal("1.5")] if False) + 0)
print(sum(x for x in [0.5] * 10), sum(x for x in [1e308, 1e308, -1e308]), sum(x for x in [True, 2, False]))


class Cents(int):
    def __add__(self, other):
        return Cents(int(self) + int(other) + 1000)

    __radd__ = __add__


print(sum(x for x in [1, Cents(2), 3, 4]))


# What a yield receives is None, and a yield's neighbours run in order with the adding.
def echo():
    received = yield 1
    print("received", received)
    received = yield 2
    print("received", received)


print(sum(echo()))


def inner():
    yield 1
    yield 2
    return "inner done"


def outer():
    result = yield from inner()
    print("yield from gave", result)
    yield 10


print(sum(outer()))


def guarded():
    try:
        yield 1
        yield 2
    finally:
        print("finally ran")


print(sum(guarded()))


# A generator that fails part way: the exception and its traceback are the protocol's.
def failing():
    yield 5
    yield 6
    raise ValueError("failed after two")


try:
    sum(failing())
except ValueError as error:
    names = [frame.name for frame in traceback.extract_tb(error.__traceback__)]
    print("ValueError", error, names)


# Running while drained, as while resumed; sums inside sums; a generator summed in parts.
def watched():
    yield 1
    yield int(me.gi_running)


me = watched()
print(sum(me), me.gi_running, next(me, "exhausted"))
print(sum(sum(j for j in range(i)) for i in range(300)))
part = (i for i in range(10))
print(next(part), sum(part), sum(part), next(part, "end"))
stop = (x for x in [1, 2, 3])
print(sum(stop, 0.0), list(stop))


# Under a trace function every yield is a real one: the events are the protocol's.
events = []


def tracer(frame, event, arg):
    if frame.f_code.co_name == "counted":
        events.append(event)
    return tracer


def counted():
    yield 1
    yield 2


sys.settrace(tracer)
total = sum(counted())
sys.settrace(None)
print(total, events.count("call"), events.count("return"))


# `list()`, `list.extend`, `any` and `all` take a generator's items the same way.
print(list(i * 2 for i in range(5)), list(x for x in ()), [*(c for c in "ab")])
grown = [0]
grown.extend(x for x in range(10) if len(grown) < 4)
print(grown)
partial = [0]
try:
    partial.extend(failing())
except ValueError:
    print("extend kept", partial)


def numbers():
    for i in range(5):
        print("yield", i)
        yield i


rest = numbers()
print(any(rest), next(rest))
rest = numbers()
print(all(rest), next(rest))
print(any(x for x in [0, 0.0, "", None, False, 0.5]), all(x for x in [1, "a", True, 2.5, []]))
print(any(x > 3 for x in range(10)), all(x < 3 for x in range(10)), any(()), all(()))


class Loud:
    def __init__(self, truth):
        self.truth = truth

    def __bool__(self):
        print("bool of", self.truth)
        return self.truth


def loud():
    for truth in (False, False, True, False):
        print("yield loud", truth)
        yield Loud(truth)


print(any(loud()))


# An int subclass is freed with the generator suspended, as item by item: its `__del__` sees
# the generator as any code between two items does.
class Noisy(int):
    def __del__(self):
        print("freed", int(self), "running" if noisy.gi_running else "suspended")


noisy = (Noisy(i) for i in range(3))
print(sum(noisy, 0.5))
noisy = (Noisy(i) for i in range(3))
print(sum(noisy))
