from functools import reduce

def compose(*funcs):
    return reduce(lambda f, g: lambda x: g(f(x)), funcs)

clean = compose(str.strip, str.lower, lambda s: s.replace(" ", "_"), lambda s: s[:20])
names = ["  Total Revenue  ", "Customer ID", "  Signup Date (UTC)", "A Very Long Column Name Here"]
for n in names:
    print(f"{n!r:32} -> {clean(n)!r}")

nested = {"a": {"b": {"c": 42}}}
print(reduce(lambda d, k: d[k], ["a", "b", "c"], nested))
print("empty with initial:", reduce(lambda a, b: a + b, [], 0))
