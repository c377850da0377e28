from collections import deque

def windows(seq, size):
    win = deque(maxlen=size)
    for x in seq:
        win.append(x)
        if len(win) == size:
            yield tuple(win)

cpu = [22, 25, 24, 23, 80, 85, 26, 24, 23, 91, 22]
for i, w in enumerate(windows(cpu, 3)):
    avg = sum(w) / len(w)
    marker = " <-- spike" if avg > 50 else ""
    print(f"t={i:>2}..{i + 2:<2} {w} avg={avg:5.1f}{marker}")

pairs = list(zip(cpu, cpu[1:]))
jumps = [(a, b) for a, b in pairs if abs(b - a) > 40]
print("big jumps:", jumps)
