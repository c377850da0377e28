import io

class Tracker:
    open_handles = 0

def process(name, text):
    buf = io.StringIO(text)
    Tracker.open_handles += 1
    try:
        total = 0
        for n, line in enumerate(buf, start=1):
            total += int(line)
        return f"{name}: sum={total}"
    except ValueError as e:
        return f"{name}: bad line {n}: {e}"
    finally:
        buf.close()
        Tracker.open_handles -= 1

for name, text in [("a.txt", "1\n2\n3\n"), ("b.txt", "10\nten\n30\n"), ("c.txt", "")]:
    print(process(name, text))
print("open handles:", Tracker.open_handles)
buf = io.StringIO("x")
buf.close()
try:
    buf.read()
except ValueError as e:
    print("read after close:", e)
