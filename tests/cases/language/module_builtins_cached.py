# sluice: cpython = true
# Builtins read by module-level code, remembered while the module's names stay the same: a
# builtin shadowed and unshadowed mid-loop, replaced or deleted in builtins, shadowed through
# globals(), a name defined later, and class bodies and exec with separate locals.
import builtins

out = []
for i in range(3):
    out.append(len("abc") + i)
print(out)

results = []
for step in range(6):
    if step == 2:
        len = lambda x: -1
    if step == 4:
        del len
    results.append(len("ab"))
print(results)

original_abs = builtins.abs
patched = []
for step in range(4):
    if step == 2:
        builtins.abs = lambda x: "patched"
    patched.append(abs(-3))
builtins.abs = original_abs
print(patched, abs(-5))

builtins.my_helper = lambda: "there"
seen = []
for step in range(4):
    if step == 2:
        del builtins.my_helper
    try:
        seen.append(my_helper())
    except NameError as error:
        seen.append(str(error))
print(seen)

mine = []
for step in range(4):
    if step == 1:
        globals()["max"] = lambda *args: "mine"
    if step == 3:
        del globals()["max"]
    mine.append(max(1, 2))
print(mine)

caught = []
for step in range(3):
    try:
        caught.append(later_name)
    except NameError as error:
        caught.append(type(error).__name__)
        later_name = step * 10
print(caught)

namespace = {}
exec("r = [len('xyz') for _ in range(3)]\nq = len('ab')\nfor _ in range(3):\n    q += len('a')", {}, namespace)
print(namespace["r"], namespace["q"])


class Body:
    total = sum([1, 2, 3])
    len = len("four")
    after = len


print(Body.total, Body.len, Body.after)
for step in range(3):
    print(str(step), min(step, 1), sorted([step, 0]), isinstance(step, int), end=" ")
print()
