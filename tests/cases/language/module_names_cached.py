# Module-level names are read and written where they were last found in the namespace
# (a hint per name in each code object); every way the namespace changes under a loop must
# still give CPython's answers.
total = 0
for i in range(5):
    total = total + i
print("total", total, "i", i)

# Names removed and made again move to other entries of the namespace.
for round_ in range(3):
    if round_ == 1:
        del total
        total = 100
    total = total + 1
print("after del", total)

# Many new globals while a loop runs: the namespace grows and its entries move.
for n in range(300):
    globals()[f"extra_{n}"] = n
    total = total + 1
print("grown", total, extra_299)

# A key equal to a name but another object, put in through globals().
key = "".join(["sha", "dow"])
globals()[key] = "first"
for _ in range(2):
    print("shadow", shadow)
    globals()[key] = "second"


class Key(str):
    def __hash__(self):
        return str.__hash__(self)

    def __eq__(self, other):
        return str.__eq__(self, other)


globals()[Key("weird")] = "from a str subclass"
print("weird", weird)
weird = "replaced"
print("weird", weird, sum(1 for k in globals() if k == "weird"))

# The same code run against different namespaces: each answers for itself.
code = compile("x = x + 1\nseen = x", "<ns>", "exec")
first, second = {"x": 1}, {"pad": 0, "x": 10}
for _ in range(3):
    exec(code, first)
    exec(code, second)
print("namespaces", first["seen"], second["seen"])

# A namespace that loses the name between runs: the next read falls back to builtins.
ns = {"len": lambda s: -1}
probe = compile("r = len('abc')", "<ns>", "exec")
exec(probe, ns)
print("shadowed len", ns["r"])
del ns["len"]
exec(probe, ns)
print("builtin len", ns["r"])


# Class bodies: each class made runs the same body against a new namespace.
def make(value):
    class Made:
        attr = value
        doubled = attr * 2

    return Made


print("classes", [make(v).doubled for v in (1, 2, 3)])

# Deleted through globals() inside the loop that reads it.
flag = 0
try:
    for step in range(3):
        flag = flag + 1
        if step == 1:
            del globals()["flag"]
except NameError as exc:
    print("NameError", exc)
