a = 1
# ---
b = a + 1
# ---
c = [a, b]
# ---
def f(x):
    return x * 2
# ---
d = f(c[1])
# ---
e = {"d": d}
# ---
import json
# ---
s = json.dumps(e)
# ---
t = len(s)
# ---
print(t)
