from itertools import cycle, count, repeat, islice

colors = cycle(["red", "green", "blue"])
servers = ["s1", "s2", "s3", "s4", "s5"]
for s, c in zip(servers, colors):
    print(s, c)

ids = count(start=1000, step=5)
print("next ids:", [next(ids) for _ in range(4)])
print("padding:", list(repeat("-", 3)))
print("squares:", list(map(pow, range(5), repeat(2))))
print("float count:", list(islice(count(0.5, 0.25), 4)))
