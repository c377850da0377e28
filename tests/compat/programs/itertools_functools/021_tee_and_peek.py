from itertools import tee, islice

def moving_pairs(it):
    a, b = tee(it)
    next(b, None)
    return zip(a, b)

stream = (x * x for x in range(1, 8))
print(list(moving_pairs(stream)))

src = iter(["header", "row1", "row2", "row3"])
peek, rest = tee(src)
print("first item:", next(peek))
print("all items still there:", list(rest))
x, y, z = tee(range(3), 3)
print(list(x), sum(y), list(islice(z, 1)))
