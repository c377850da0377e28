from collections import OrderedDict

steps = OrderedDict()
for name, secs in [("fetch", 1.2), ("parse", 0.4), ("validate", 0.1), ("store", 2.5)]:
    steps[name] = secs

steps.move_to_end("validate", last=False)
print("pipeline:", " -> ".join(steps))
a = OrderedDict([("x", 1), ("y", 2)])
b = OrderedDict([("y", 2), ("x", 1)])
print("ordered equal:", a == b, "| dict equal:", dict(a) == dict(b), "| mixed:", a == dict(b))
last = steps.popitem()
print("popped:", last, "remaining:", list(steps.items()))
print(repr(OrderedDict(sorted({"b": 2, "a": 1}.items()))))
