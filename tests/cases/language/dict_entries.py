# sluice: cpython = true
# A dict's entries keep no record of their index-table slot (the twenty-fourth change of the
# rustpython-vm patch): popitem finds the slot by probing, and a lookup that let go of the
# dict's lock (a key's __eq__ ran) checks that its slot still names the entry it found. Keys
# that collide, slots left deleted, tables grown and shrunk, and dicts changed by the very
# comparison that looks into them keep CPython's contents, order and errors.

# Colliding ints (one slot in every table up to 64 slots), popped from the back, between
# deletions that leave deleted slots on the probe sequence.
d = {k * 64: k for k in range(12)}
del d[3 * 64], d[7 * 64]
popped = [d.popitem() for _ in range(4)]
d[3 * 64] = "back"
d[99 * 64] = "new"
print(popped, d, [k in d for k in (0, 64, 192, 448, 6336)])
while d:
    d.popitem()
d[5] = 5
print(d, len(d))

# Popped to empty from a grown table, refilled past a resize, popped again in the middle.
e = {f"k{i}": i for i in range(100)}
for _ in range(90):
    e.popitem()
e.update((f"n{i}", i) for i in range(50))
del e["k3"]
print(len(e), list(e)[:5], e.popitem(), e.get("n48"), e.get("k9"), e.setdefault("k3", -3))
print(sum(e.values()), e.pop("n0"), e.pop("missing", "default"))


# Keys whose __eq__ changes the dict while a lookup compares them.
class Shifty:
    def __init__(self, name, target=None, action=None):
        self.name = name
        self.target = target
        self.action = action

    def __hash__(self):
        return 7

    def __eq__(self, other):
        if self.action is not None and self.target is not None:
            action, self.action = self.action, None
            action(self.target)
        return isinstance(other, Shifty) and self.name == other.name

    def __repr__(self):
        return f"Shifty({self.name})"


for label, action in [
    ("add", lambda t: t.update({f"x{i}": i for i in range(20)})),
    ("delete", lambda t: t.pop(Shifty("a"), None)),
    ("clear", lambda t: t.clear()),
    ("popitem", lambda t: t.popitem()),
]:
    for op in ("get", "set", "pop", "in"):
        # The stored key compared second (after its colliding neighbour) runs the action.
        t = {}
        stored = Shifty("b")
        t[Shifty("a")] = 1
        t[stored] = 2
        t["s"] = 3
        stored.target, stored.action = t, action
        probe = Shifty("b")
        try:
            if op == "get":
                result = t.get(probe)
            elif op == "set":
                t[probe] = 20
                result = t[probe]
            elif op == "pop":
                result = t.pop(probe, "gone")
            else:
                result = probe in t
        except RuntimeError as error:
            result = f"RuntimeError: {error}"
        print(label, op, result, sorted(map(repr, t)), len(t))

# Many entries in and out, in an order that reuses deleted slots, checked against a list.
f, order = {}, []
for i in range(3000):
    key = (i * 7919) % 1000
    if key in f:
        del f[key]
        order.remove(key)
    else:
        f[key] = i
        order.append(key)
    if i % 500 == 499:
        k, v = f.popitem()
        assert k == order.pop(), (k, i)
print(len(f), list(f) == order, sum(f))
