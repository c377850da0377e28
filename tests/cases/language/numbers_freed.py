# sluice: cpython = true
# An exact int or float goes straight back to its free list when freed (the eighth change of
# the rustpython-vm patch); everything else that holds a number must still be freed in full.
import gc
import weakref


class Counted(int):
    freed = 0

    def __del__(self):
        Counted.freed += 1


class Money(float):
    def __del__(self):
        print("Money freed", float(self))


# Exact ints and floats, small, large and past 64 bits, made and freed by the hundred thousand:
# whatever a free list hands back must hold the new value, never an old one.
total, floats = 0, 0.0
for i in range(100_000):
    big = i * 2**70
    total += (i * i) % 7 + big // 2**70 - i
    floats += (i / 3.0) - (i / 3.0) + 0.5
print(total, floats)
print([n * 1.5 for n in range(5)], [2**64 + n for n in range(3)], [-n for n in range(3)])

for n in range(5):
    Counted(n)
print("Counted freed", Counted.freed)
Money(2.5)
kept = [Counted(7), Money(1.25)]
print(kept[0] + 1, kept[1] * 2, type(kept[0]).__name__, type(kept[1]).__name__)
del kept
gc.collect()
print("Counted freed", Counted.freed)

# No number takes a weak reference, so none can be seen after it is freed.
for exact in (5, 2.5, 2**80, Counted(3)):
    try:
        weakref.ref(exact)
    except TypeError as error:
        print("TypeError", error)
print(True + True, sum([True, 1.5]), int(True), float(False))
