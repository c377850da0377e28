# sluice: cpython = true
# `d.get(k)` and `d.get(k, default)` are answered by the call instruction itself once it is
# specialized (after a few passes of a loop), and a dict literal is sized before it is
# filled: what a dict subclass, a key's own hash and equality, errors and a profiler see is
# CPython's.
import sys

# Enough passes for the call to be specialized, at module level and in a function.
counts = {}
for word in "the cat and the dog and the bird".split() * 20:
    counts[word] = counts.get(word, 0) + 1
print(sorted(counts.items()))
seen = [counts.get(w) for w in ["the", "cat", "fish"] * 30]
print(seen[:3], seen.count(None))


def tally(words):
    totals = {}
    for word in words:
        totals[word] = totals.get(word, 0) + len(word)
        totals.get(word)
    return totals

print(sorted(tally(["ab", "c", "ab"] * 40).items()))


# A subclass: its own `get` is called; dict.get never calls `__missing__` or `__getitem__`.
class Defaults(dict):
    def __missing__(self, key):
        return "missing"

    def __getitem__(self, key):
        return "getitem"

class OwnGet(dict):
    def get(self, key, default=None):
        return ("own", key, default)

plain_sub, own = Defaults(a=1), OwnGet(a=1)
for _ in range(40):
    results = (plain_sub.get("a"), plain_sub.get("b"), plain_sub.get("b", 0), own.get("a"), own.get("b", 2))
print(results, plain_sub["zzz"])


# The key's own hash and equality run, and their errors come out of the call.
class Key:
    compared = 0

    def __init__(self, name):
        self.name = name

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        Key.compared += 1
        return isinstance(other, Key) and self.name == other.name

keyed = {Key("x"): "found"}
for _ in range(40):
    got = keyed.get(Key("x")), keyed.get(Key("y"), "default")
print(got, Key.compared)

class BadHash:
    def __hash__(self):
        raise ValueError("no hash for you")

lookups = [{"a": 1}] * 40
for i, table in enumerate(lookups):
    try:
        table.get([] if i == 39 else "a")
    except TypeError as e:
        print("TypeError:", e, i)
try:
    {}.get(BadHash(), 1)
except ValueError as e:
    print("ValueError:", e)


# Other ways to reach dict.get: unbound, bound and kept, with keywords or too many arguments.
d = {"k": "v"}
getter = d.get
for _ in range(40):
    out = (dict.get(d, "k"), getter("k"), getter("nope", "dflt"))
print(out)
for call in (lambda: d.get(), lambda: d.get("k", 1, 2)):
    try:
        call()
    except TypeError as e:
        print("TypeError:", e)


# A profiler sees each call as a C call, specialized or not.
events = []
def profile(frame, event, arg):
    if event.startswith("c_"):
        events.append((event, getattr(arg, "__name__", None)))

def under_profile():
    table = {"a": 1}
    for key in ["a", "b", "a"]:
        table.get(key, 0)
        table.get(key)
    "ab".upper()
    "a,b".split(",")

for _ in range(30):
    under_profile()
sys.setprofile(profile)
under_profile()
sys.setprofile(None)
print(events)


# Literals: duplicate keys keep the first key object and the last value, in first place.
first, second = "".join(["du", "p"]), "".join(["d", "up"])
for _ in range(40):
    literal = {first: 1, "other": 2, second: 3}
print(literal, next(iter(literal)) is first)
sizes = [len({}), len({"a": 1}), len({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}),
         len({i: i for i in range(9)}), len({1: 1, 1.0: 2, True: 3})]
print(sizes, {1: 1, 1.0: 2, True: 3})
wide = {"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k10": 10}
wide["k11"] = 11
print(list(wide.items())[-3:], len(wide))
try:
    {"a": 1, BadHash(): 2}
except ValueError as e:
    print("ValueError:", e)
try:
    {"a": 1, []: 2}
except TypeError as e:
    print("TypeError:", e)
