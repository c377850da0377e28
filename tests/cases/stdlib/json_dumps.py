# sluice: cpython = true
# json.dumps as CPython gives it: the native encoder for plain data and the standard encoder
# for everything it declines must agree with CPython, character for character and error for
# error, under every layout option.
import inspect
import json
import random

layouts = [
    {},
    {"indent": 2},
    {"indent": "\t", "sort_keys": True},
    {"indent": 0},
    {"indent": -3},
    {"separators": (",", ":")},
    {"separators": [" ,", " : "], "indent": 1},
    {"ensure_ascii": False},
    {"ensure_ascii": False, "sort_keys": True, "indent": 4},
    {"sort_keys": True, "allow_nan": True, "skipkeys": False, "check_circular": True, "default": None},
]

values = [
    None, True, False, 0, -1, 2**63, -(2**63) - 1, 2**127 - 1, 2**200, -(2**130),
    0.0, -0.0, 0.1, 1.5, 1e16, 1e-7, 1.7976931348623157e308, 5e-324, float("nan"), float("inf"), float("-inf"),
    "", "plain", 'quote " backslash \\ slash /', "\b\f\n\r\t \x00 \x1f \x7f", "caf\u00e9 \u2603 \U0001f600 \u2028",
    [], {}, [[]], [{}], {"": ""}, (1, 2), [1, (2, [3, {"a": ()}])],
    {"b": 1, "a": [1, 2, {"d": None, "c": True}], "é": "ü", "\U0001f600": 0},
    {1: "int", 2.5: "float", True: "bool", None: "none", float("nan"): "nan", -0.0: "zero"},
    {"nested": {"deeper": {"deepest": [1.25, -3, "x", False]}}},
]

checked = 0
for layout in layouts:
    for value in values:
        try:
            text = json.dumps(value, **layout)
        except TypeError:
            # sort_keys over keys of mixed types, which CPython refuses too.
            print("TypeError")
            continue
        assert text == json.JSONEncoder(**layout).encode(value), (layout, value)
        checked += 1
        print(text)
print("checked", checked)

# Random plain data: the native encoder and the standard one give the same text.
rng = random.Random(17)
alphabet = ["a", "Z", " ", '"', "\\", "\n", "\x01", "\x7f", "\u00e9", "\u4e2d", "\U0001f600", "\ud7ff"]


def text():
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))


def scalar():
    kind = rng.randrange(6)
    if kind == 0:
        return rng.randrange(-(2**70), 2**70)
    if kind == 1:
        return rng.uniform(-1e6, 1e6) * 10 ** rng.randrange(-20, 20)
    if kind == 2:
        return text()
    return [None, True, False][kind - 3]


def data(depth=0):
    kind = rng.randrange(4) if depth < 4 else 0
    if kind == 0:
        return scalar()
    if kind == 1:
        return [data(depth + 1) for _ in range(rng.randrange(4))]
    if kind == 2:
        return tuple(data(depth + 1) for _ in range(rng.randrange(3)))
    keys = [text() if rng.randrange(3) else rng.randrange(100) for _ in range(rng.randrange(4))]
    return {key: data(depth + 1) for key in keys}


agreed = 0
for round in range(300):
    value = data()
    layout = rng.choice(layouts)
    try:
        expected = json.JSONEncoder(**layout).encode(value)
    except TypeError:
        expected = TypeError
    try:
        got = json.dumps(value, **layout)
    except TypeError:
        got = TypeError
    assert got == expected, (layout, value, got, expected)
    agreed += 1
print("random values agreed", agreed)

# Declined: the standard encoder answers, with CPython's text and errors.
class Tagged(dict):
    pass


print(json.dumps(Tagged(a=1)), json.dumps({"when": {1, 2}}, default=sorted), json.dumps(["s"], indent=True))
loop = []
loop.append(loop)
# A dict inside itself: the native encoder reads each dict in place, under its lock.
cycle = {"a": 1}
cycle["self"] = [cycle]
for value, options in [({1, 2}, {}), (loop, {}), (cycle, {}), ({"x": cycle}, {"indent": 2}), ({(1, 2): 3}, {}),
                       ("\ud800", {"ensure_ascii": False}), ("\ud800", {})]:
    try:
        print(repr(json.dumps(value, **options)))
    except (TypeError, ValueError) as e:
        print(type(e).__name__, e)
print(json.dumps({(1, 2): 3, "k": 1}, skipkeys=True), json.dumps({"a": [1]}, cls=None))
print(inspect.signature(json.dumps))
try:
    json.dumps({}, None)
except TypeError as e:
    print("TypeError", e)

# Pieces of every length around the encoder's short copies (up to 16 bytes copied as words):
# keys, values, escapes at each position, ints of every digit count, long separators and
# indents.
pieces = ["x" * n for n in range(20)] + ["ab\"" * n for n in range(1, 7)] + ["é" * n for n in range(1, 10)]
for n in range(1, 18):
    pieces.append("k" * (n - 1) + "\n")
    pieces.append("\t" + "v" * (n - 1))
record = {piece: piece[::-1] for piece in pieces}
print(json.dumps(record))
print(json.dumps(record, ensure_ascii=False))
print(json.dumps([10 ** n for n in range(20)] + [-(10 ** n) + 1 for n in range(20)]))
print(json.dumps({"a": [1, "b"]}, separators=(" ,    ", "  :   ")))
print(json.dumps({"a": [1, {"b": "c"}]}, indent="\t" * 9))
print(json.dumps({"a": [1]}, indent=17, separators=("," * 17, ":" * 17)))

# In Sluice the native encoder answers plain data itself (and declines the rest), so the
# agreement above was between the two encoders.
try:
    import _sluice_abi
except ImportError:
    _sluice_abi = None
if _sluice_abi is not None:
    assert _sluice_abi.json_dumps({"a": [1, 2.5]}, None, ", ", ": ", False, True) == '{"a": [1, 2.5]}'
    assert _sluice_abi.json_dumps({"a": {1}}, None, ", ", ": ", False, True) is NotImplemented
    assert _sluice_abi.json_dumps(Tagged(), None, ", ", ": ", False, True) is NotImplemented
