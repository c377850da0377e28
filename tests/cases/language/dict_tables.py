# A dict's index table sits inside the dict while it is small and moves to its own memory
# as it grows: every way a table is made, grown, cleared, copied or emptied keeps the keys.
import json

d = {}
for i in range(40):
    d[f"k{i}"] = i
    if i in (4, 5, 10, 21):
        print(i, len(d), d["k0"], d[f"k{i}"], list(d)[-1])
for i in range(0, 40, 3):
    del d[f"k{i}"]
print(len(d), sum(d.values()), "k3" in d, "k4" in d)

# Cleared, then filled again past the small table.
d.clear()
print(d, d.get("k1"))
d.update({f"n{i}": i for i in range(12)})
print(len(d), d["n11"], list(d)[:3])

# Copies of a dict emptied from the back, and of an empty one.
e = {i: str(i) for i in range(30)}
while len(e) > 3:
    e.popitem()
c = e.copy()
print(c, dict(e) == c, {}.copy(), dict({}))
c[99] = "x"
print(c, e)

# Literals and decoded objects of five, six and many keys.
print({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
six = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6}
six["g"] = 7
print(six, len(six))
wide = json.loads(json.dumps({f"f{i}": i for i in range(50)}))
print(len(wide), wide["f0"], wide["f49"], list(wide)[25])
small = json.loads('{"x": 1, "y": {"z": [1, {"w": null}]}, "x": 2}')
print(small)

# Sets, which share the dict's table, through an add and remove storm.
s = set()
for round_ in range(3):
    for i in range(100):
        s.add(i * 7 + round_)
    for i in range(95):
        s.discard(i * 7 + round_)
print(len(s), sorted(s)[:6])
print(frozenset("abc") | {"d"} == {"a", "b", "c", "d"})

# Mixed keys: ints, strs, tuples, and a float equal to an int.
m = {1: "int", "1": "str", (1,): "tuple", 1.0: "float", True: "bool"}
print(m, len(m))
