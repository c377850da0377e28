# Dict literals, f-strings and int `%`/`//`: the interpreter builds these without generic
# steps they cannot need; every case here is what CPython prints.


class LoudStr(str):
    """A str subclass with its own hash and equality: it must still be asked."""

    def __hash__(self):
        print("hash", str(self))
        return str.__hash__(self)

    def __eq__(self, other):
        print("eq", str(self), "==", str(other))
        return str.__eq__(self, other)


class Always:
    def __init__(self, h):
        self.h = h

    def __hash__(self):
        return self.h

    def __eq__(self, other):
        print("Always.eq")
        return True


# Duplicate keys: the first place, the last value.
print({"a": 1, "b": 2, "a": 3})
print(list({"a": 1, "b": 2, "a": 3}))
k = "k"
print({k: 1, "k": 2, "x" + "y": 3, "xy": 4})

# A subclass key beside an equal exact str, both orders.
d = {LoudStr("s"): 1, "s": 2}
print(d, [type(key).__name__ for key in d])
d = {"s": 1, LoudStr("s"): 2}
print(d, [type(key).__name__ for key in d])

# Keys of other types beside strs with the same hash.
h = hash("q")
d = {"q": 1, Always(h): 2, 1: 3, 1.0: 4, True: 5}
print(len(d), list(d.values()))

# A stored key of another type, then a str of its hash: the other key's `__eq__` is asked.
d = {Always(h): 1, "q": 2, "r": 3}
print(len(d), list(d.values()))


# A repeated key's first value is freed while the literal is built, its `__del__` run then.
class Noisy:
    def __init__(self, name):
        self.name = name

    def __del__(self):
        print("del", self.name)


d = {"a": Noisy("first"), "b": 1, "a": Noisy("second"), "b": Noisy("third")}
print(list(d), d["a"].name, d["b"].name)
del d

# Keys that are not stored, freed when the literal is done: a `__del__` that walks every dict,
# the one being built included, finds them readable.
import gc


class Shy:
    def __init__(self, n):
        self.n = n

    def __hash__(self):
        return 1

    def __eq__(self, other):
        return isinstance(other, Shy)

    def __del__(self):
        print("del", self.n, all(len(o) >= 0 for o in gc.get_objects() if type(o) is dict))


d = {Shy(1): "a", Shy(2): "b", "s": Shy(3), "s": 4}
k = Shy(9)
print(len(d), d[k], d["s"])
del d, k

# A key that cannot be hashed, after some that went in.
try:
    {"ok": 1, [1]: 2}
except TypeError as exc:
    print("TypeError", exc)

# Values that are containers (the dict must be collected with them).
import gc

cycle = {"self": None, "n": 1}
cycle["self"] = cycle
literal = {"inner": cycle, "list": [cycle]}
print(gc.is_tracked(literal), gc.is_tracked({"a": 1, "b": "x"}), gc.is_tracked({"a": []}))
del cycle, literal
print(gc.collect() >= 1)

# Many keys, more than one resize of a fresh dict.
wide = {"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k10": 10, "k11": 11}
print(len(wide), wide["k11"], list(wide)[-1])

# f-strings: empty, non-ASCII and long pieces.
name = "é"
empty = ""
emoji = "😀"
print(f"{empty}{empty}" == "", f"a{empty}b", f"{name}-{emoji}-{name * 3}")
print(len(f"{'x' * 1000}{name}{'y' * 1000}"), f"{1}{2.5}{None}{[1, 'a']}")
print(f"{'ab'!r}{3:>4}{'é':^5}|")
for i in range(3):
    print(f"SKU{i % 97}", end=" ")
print()

# `%` and `//` at the edges of sign and of 64 bits.
big = 2**63
for a in (7, -7, 0, 2**62, -(2**62), big - 1, -big, big, -big - 1, 10**30):
    for b in (3, -3, 1, -1, big - 1, -big, big):
        print(a % b, a // b, divmod(a, b) == (a // b, a % b), end="; ")
    print()
for b in (0,):
    for op in ("%", "//"):
        try:
            eval(f"5 {op} b")
        except ZeroDivisionError:
            print("ZeroDivisionError", op)
x = 17
x %= 5
y = -17
y //= 5
print(x, y, True % 2, 7 % True, (-8) // True)


class MyInt(int):
    def __mod__(self, other):
        return "MyInt.mod"

    def __rfloordiv__(self, other):
        return "MyInt.rfloordiv"


print(MyInt(7) % 3, 7 // MyInt(3), 7 % MyInt(3))
