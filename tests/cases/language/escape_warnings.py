# sluice: cpython = true
# Invalid escape sequences warn when a source is compiled; a source without a backslash, or
# whose backslashes are all valid or outside string literals, warns of nothing. Each warning
# is shown as the character after its backslash and its line: the message's wording changed
# in CPython 3.14, whose text the guest gives.
import re
import warnings

ESCAPED = re.compile(r"\\(.)")


def warnings_of(source):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compile(source, "<case>", "exec")
    return [(ESCAPED.search(str(w.message)).group(1), w.lineno) for w in caught]


sources = [
    "x = 1 + 1",
    "s = 'plain'\nt = \"also plain\"",
    "s = 'a\\\\d'",
    "s = 'tab\\there\\n'",
    "s = 'a\\d'",
    "b = b'\\d'",
    "r = r'\\d'",
    "rb = rb'\\d'",
    "f = f'{1}\\d'",
    "f = f'{1:>{2}}\\q'",
    "t = '''\\q\nmore\n'''",
    "s = 'ok'\ns2 = 'a\\w'",
    "x = [1,\\\n 2]",
    "# a comment with \\d\nx = 1",
    "s = 'first \\d' + 'second \\w'",
]
for source in sources:
    print(repr(source), warnings_of(source))

with warnings.catch_warnings():
    warnings.simplefilter("error")
    for source in ["s = 'a\\d'", "s = 'a\\\\d'", "x = 1"]:
        try:
            compile(source, "<case>", "exec")
            print(repr(source), "compiles")
        except SyntaxError as exc:
            print(repr(source), "SyntaxError:", ESCAPED.search(exc.msg).group(1), exc.lineno)
