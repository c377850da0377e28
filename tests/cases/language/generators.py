# sluice: cpython = true
def fib():
    a, b = 0, 1
    while True:
        yield a
        a, b = b, a + b


def take(n, it):
    for _, x in zip(range(n), it):
        yield x


def echo():
    received = []
    while True:
        value = yield len(received)
        if value is None:
            return received
        received.append(value)


print(list(take(10, fib())))
gen = echo()
next(gen)
gen.send("a")
gen.send("b")
try:
    gen.send(None)
except StopIteration as stop:
    print("returned", stop.value)


def delegate():
    result = yield from echo()
    yield result


d = delegate()
next(d)
d.send(1)
print(d.send(None))
print(sum(x * x for x in range(10) if x % 2))
