# sluice: cpython = true
# Module-level names are read and written straight in the module's dict, and an exact str
# key's cached hash and text are used without the generic dispatch: what must still go
# through the slots (str subclasses, mappings that are not exact dicts) does, against CPython.

# A global, then a builtin, then a global that shadows the builtin, then the builtin again.
total = 0
for word in ["a", "bb", "ccc"]:
    total += len(word)
print(total)
len = lambda value: -1
print(len("abc"))
del len
print(len("abc"))
try:
    print(not_defined_anywhere)
except NameError as e:
    print("NameError:", e)


# A class body reads its own names first, then the module's, then builtins.
scale = 10
class Config:
    scale = 2
    doubled = scale * 2
    length = len("four")
print(Config.doubled, Config.length, scale)


# A str subclass keeps its own hash and equality as a dict key.
class Folded(str):
    def __hash__(self):
        return hash(self.lower())

    def __eq__(self, other):
        return isinstance(other, str) and self.lower() == other.lower()

table = {Folded("Key"): 1}
print(table.get("key"), table.get(Folded("KEY")), table.get("Key"))
print("key" in table, Folded("kEy") in table, {"a": 1, "b": 2}.get("b"))


class Constant(str):
    def __hash__(self):
        return 7

table = {Constant("x"): "constant", "x": "plain"}
print(sorted(table.values()), table["x"], table[Constant("x")], len(table))

# Equal strs that are not the same object, as keys.
key = "".join(["re", "gion"])
rows = {"region": "north"}
literal = "region"
print(rows[key], key is literal, {key: 1}[literal])


# exec with locals that are not an exact dict: a dict subclass with __missing__, and a
# mapping of its own. Both see every read and write.
class Defaulting(dict):
    def __missing__(self, name):
        return f"<{name}>"

scope = Defaulting()
exec("x = 1\ny = x + 1\nz = w", {}, scope)
print(sorted(scope.items()))


class Recording:
    def __init__(self):
        self.data, self.log = {}, []

    def __getitem__(self, name):
        self.log.append(("get", name))
        return self.data[name]

    def __setitem__(self, name, value):
        self.log.append(("set", name))
        self.data[name] = value

recording = Recording()
exec("a = 5\nb = a * 2\nc = abs(-b)", {}, recording)
print(recording.data, recording.log)


# A KeyError raised inside the lookup itself (a key's __eq__) is the script's error when the
# locals are an exact dict, as in CPython; a dict subclass's lookup goes through __getitem__,
# whose KeyError sends the name on to the globals.
class Evil:
    def __hash__(self):
        return hash("target")

    def __eq__(self, other):
        raise KeyError("from __eq__")

try:
    print(eval("target", {"target": "global"}, {Evil(): 1}))
except KeyError as e:
    print("KeyError", e)


class Sub(dict):
    pass

print(eval("target", {"target": "global"}, Sub({Evil(): 1})))


# A class body whose namespace is not an exact dict (a metaclass's __prepare__) still sees
# every read and write through the namespace's own methods.
class Namespace(dict):
    def __getitem__(self, name):
        if name == "magic":
            return 42
        return super().__getitem__(name)

    def __setitem__(self, name, value):
        super().__setitem__(name, value * 2 if isinstance(value, int) else value)

class Meta(type):
    @classmethod
    def __prepare__(mcs, name, bases):
        return Namespace()

    def __new__(mcs, name, bases, namespace):
        return super().__new__(mcs, name, bases, dict(namespace))

class Prepared(metaclass=Meta):
    base = 5
    seen = magic + base
print(Prepared.base, Prepared.seen)


# Equal exact strs that are different objects, in every kind of lookup: a probe compares
# them by text where it finds their hash (decoded keys against the code's constants).
import json

record = json.loads('{"status": "paid", "region": "east", "cents": 250}')
made = {"".join(["sta", "tus"]): 1, "".join(["reg", "ion"]): 2}
print(record["status"], record.get("region"), "cents" in record, "cent" in record)
print(made["status"], made.get("region"), made.setdefault("status", 9), len(made))
made["status"] = 3
del made["".join(["reg", "ion"])]
print(dict(made), made.pop("status"), made)
totals = {}
for region in ["".join(["ea", "st"]), "east", json.loads('"east"'), "west"]:
    totals[region] = totals.get(region, 0) + 1
print(sorted(totals.items()))


# A str subclass as a stored key, probed with an equal exact str of the same hash: its own
# __eq__ still decides, once per probe that reaches it.
class Counted(str):
    calls = 0

    def __hash__(self):
        return str.__hash__(self)

    def __eq__(self, other):
        Counted.calls += 1
        return str.__eq__(self, other)

stored = {Counted("alpha"): "counted", "beta": "plain"}
print(stored["".join(["al", "pha"])], stored.get("beta"), Counted.calls)
print("".join(["al", "pha"]) in stored, Counted.calls)
