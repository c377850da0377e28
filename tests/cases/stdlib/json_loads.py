# sluice: cpython = true
# json.loads as CPython gives it: the native fast path for plain calls and the standard
# decoder for everything it declines must agree with CPython, value for value and error for
# error.
import json
import random
from json.decoder import JSONDecoder

standard = JSONDecoder()

cases = [
    '{"a": 1, "b": [true, false, null], "c": {"d": "e"}}',
    '  [1, -0, -0.0, 0.5, 1e3, 1E-3, 2.5e+2, 123456789012345678, -123456789012345678]  ',
    '[12345678901234567890123, -98765432109876543210, 1e400, -1e400, 5e-324, 0.1]',
    '"plain"', '""', '[]', '{}', '[[]]', '{"": ""}',
    r'"esc \" \\ \/ \b \f \n \r \t \u00e9 \u20ac \ud83d\ude00 end"',
    '"caf\u00e9 \u2603 \U0001f600"',
    '{"dup": 1, "x": 0, "dup": 2}',
    ' \t\n\r{ "spaced" :\n[ 1 ,\t2 ] }\r\n',
    '[1.0, 10.5e-1, 3.14159265358979323846, 1.7976931348623157e308, 2.2250738585072014e-308]',
    '[0, 1, -1, 256, 257, -5, -6, 9007199254740993]',
    # The 18 digits read here, and the 19 left to the standard decoder, on both sides of i64.
    '[999999999999999999, -999999999999999999, 1000000000000000000, -1000000000000000000]',
    '[9223372036854775807, -9223372036854775808, 9223372036854775808, 18446744073709551616]',
    '{"k\\u0041y": "v", "kAy": "w"}',
    # An object's members wait on a stack until its closing brace: nested objects, repeats of
    # a key around them (first place, last value), and more members than a new dict holds.
    '{"a": {"b": {"c": 1, "c": 2}, "d": [{"e": 1}, {}]}, "f": 3, "a": {"z": {"y": []}}}',
    '[{"x": 1}, {"x": 2, "y": {"x": 3}}, {}, {"x": {"x": {"x": 4}}, "x": 5}]',
    "{" + ", ".join(f'"k{i % 23}": {i}' for i in range(40)) + "}",
    # A key is first tried as the one at its place in the last object at its depth: records
    # that keep, reorder, drop and add keys, keys that begin with the predicted one or are
    # cut short of it, escaped and non-ASCII keys where a plain one was, and the same
    # positions taken by other shapes at other depths.
    '[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"name": "c", "id": 3}, {"id": 4},'
    ' {"idx": 5, "nam": 6}, {"i": 7, "name\\u0021": 8}, {"id": 9, "name": 10, "x": 11},'
    ' {"id\\"": 12, "name": 13}, {"caf\u00e9": 14, "name": 15}, {"caf\u00e9": 16, "n\\u0061me": 17},'
    ' {"id": {"id": [{"id": 18}], "name": {"name": 19}}, "name": {"id": 20}}, {"": 21, "id": 22}]',
    # An empty key predicted against others, and records wider than the keys predicted.
    '[{"": 1, "a": 2}, {"x": 3, "a": 4}, {"": 5}, {"xy": 6, "": 7}]',
    "[" + ", ".join("{" + ", ".join(f'"w{(i * r) % 70}": {i}' for i in range(70)) + "}" for r in (1, 1, 3)) + "]",
]
for text in cases:
    value = json.loads(text)
    assert repr(value) == repr(standard.decode(text)), text
    print(repr(value))

# In Sluice the native decoder must have read these itself, not declined them to the standard
# decoder (which would hide a bug in how it closes objects): 300 records in a row, objects
# 150 deep, and the member-stack and predicted-key cases above.
try:
    import _sluice_abi
except ImportError:
    _sluice_abi = None
if _sluice_abi is not None:
    for text in cases[-6:] + ["[" + ", ".join(['{"a": {"b": 1}, "c": {}}'] * 300) + "]",
                              '{"k": ' * 150 + "1" + "}" * 150, cases[0], '{"dup": 1, "x": 0, "dup": 2}']:
        native = _sluice_abi.loads(text)
        assert native is not NotImplemented, text[:60]
        assert repr(native) == repr(standard.decode(text)), text[:60]
    assert _sluice_abi.loads('{"k": ' * 201 + "1" + "}" * 201) is NotImplemented

# Declined by the fast path: the standard decoder answers, with CPython's values.
for text in ['NaN', '[Infinity, -Infinity]', '"\\ud800 lone"', '{"big": ' + '9' * 40 + '}']:
    print(repr(json.loads(text)))

# Errors keep the standard decoder's messages and positions (those whose wording Python 3.13
# changed, such as trailing commas, are left out: this file also runs under the machine's
# python3).
for text in ['', ' ', '{"a" 1}', '{"a": {"b": 1, "c" 2}}', '[1 2]', '"unterminated', '01', '[1.]',
             '1e', '-', '{1: 2}', 'tru', '[1] x', '\ufeff[1]', "{'a': 1}"]:
    try:
        json.loads(text)
        print("accepted", repr(text))
    except json.JSONDecodeError as e:
        print(repr(text), "->", e.msg, e.pos)

# The same signature and the same complaint about extra arguments.
import inspect

print(inspect.signature(json.loads))
try:
    json.loads("[]", None)
except TypeError as e:
    print(e)

# Options go to the standard decoder.
print(json.loads('{"a": 1.5, "b": 2}', parse_float=str, object_pairs_hook=list))
print(json.loads(b'{"bytes": true}'))

# Random documents, written every way json.dumps can, read back the same by both decoders.
rng = random.Random(7)


def document(depth):
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rng.randrange(-10**6, 10**6)
    if kind == 1:
        return rng.choice([0.0, -0.0, 0.1, 1e-9, 123.456, -2.5e300, rng.random()])
    if kind == 2:
        return "".join(rng.choice('ab"\\/\n\t\u00e9\u2603\U0001f600\x7f ') for _ in range(rng.randrange(8)))
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return rng.randrange(-10**30, 10**30)
    if kind == 5:
        return ""
    if kind in (6, 7):
        return [document(depth + 1) for _ in range(rng.randrange(5))]
    return {f"k{rng.randrange(20)}": document(depth + 1) for _ in range(rng.randrange(5))}


agreed = 0
for i in range(300):
    doc = document(0)
    text = json.dumps(doc, ensure_ascii=i % 2 == 0, indent=(None, 2, "\t")[i % 3], sort_keys=i % 5 == 0)
    value = json.loads(text)
    assert repr(value) == repr(standard.decode(text)) and value == doc, text
    agreed += 1
print("random documents agreed:", agreed)

# Short plain values are shared with their repeats within one call (keys too, as CPython
# does): each must still read back exactly, at and past the length limit, beside escaped
# and non-ASCII forms of the same text, and as a value that equals a key or a name in code.
limit = "x" * 24
records = [{"status": s, "paid": "status", "long": limit + "y" * (i % 2), "edge": limit,
            "escaped": "pa\u0069d", "accent": "caf\u00e9"} for i, s in enumerate(["paid", "open"] * 3)]
for chunk in (json.dumps(records), json.dumps(records, ensure_ascii=False)):
    value = json.loads(chunk)
    assert value == standard.decode(chunk) == records, chunk
    assert all(type(v) is str for row in value for v in row.values())
    print([row["status"] == "paid" for row in value], sum(len(row["long"]) for row in value),
          {row["paid"]: row["status"] for row in value}, value[0]["escaped"], value[1]["accent"])

# Whatever ends a string's plain run (a quote, an escape, a raw control character, which
# CPython refuses) must be found at every offset of strings up to 20 bytes, in keys and in
# values, beside bytes just above and below the ones that matter.
ends = ['\\"', '\\\\', '\\n', '\\u0001', '\\/', '\x01', '\x1f', '\t', '!', '#', '[', ']', ' ', '\x7f', 'é']


def read(decode, text):
    """What a decoder makes of `text`: its value, or its complaint and where."""
    try:
        return repr(decode(text))
    except json.JSONDecodeError as e:
        return f"refused: {e.msg} at {e.pos}"


checked = refused = 0
for length in range(20):
    for at in range(length + 1):
        for end in ends:
            body = "a" * at + end + "b" * (length - at)
            for text in ('"' + body + '"', '{"' + body + '": "' + body + '"}'):
                outcome = read(json.loads, text)
                assert outcome == read(standard.decode, text), text
                checked += 1
                refused += outcome.startswith("refused")
print("plain runs read:", checked - refused, "refused as CPython does:", refused)

# A decoded value equal to a string the program names is equal, not that object (as in
# CPython); repeats within one call may share one object, which nothing can tell apart.
paid = "paid"
rows = json.loads('[{"status": "paid"}, {"status": "paid"}, {"status": "open"}]')
print([row["status"] == paid for row in rows], [row["status"] is paid for row in rows])

# Short values are found by their bytes read as one word (at most 8 bytes), in a table sized
# to the text: every length up to a word and past it, a word's worth of bytes at the text's
# end (no whole word after it), texts that differ only in their last byte or their length,
# the empty string, escapes and non-ASCII beside plain ones, and more distinct values than
# any table holds, all decoded as CPython decodes them.
short = ["", "a", "ab", "abc", "abcdefg", "abcdefgh", "abcdefgi", "abcdefghi", "é", "né", "日本", "a\\nb", "a\\u0062"]
shapes = [short, short[::-1], [s + t for s in short for t in short]]
for values in shapes:
    text = json.dumps(values, ensure_ascii=False).replace("\\\\", "\\")
    assert json.loads(text) == standard.decode(text), text
for tail in short:
    text = '["x", "' + tail + '"]'
    assert json.loads(text) == standard.decode(text), text
many = [f"v{n}" for n in range(5000)] + [f"{n:08d}" for n in range(3000)]
text = json.dumps([{"code": v, "again": v, "status": ["paid", "open"][n % 2]} for n, v in enumerate(many)])
decoded = json.loads(text)
assert decoded == standard.decode(text)
print("short values decoded:", len(decoded), decoded[0], decoded[-1], sum(len(row["code"]) for row in decoded))
