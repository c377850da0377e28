# sluice: cpython = true
# Dead ints, floats, complexes, tuples, dicts, lists, ranges, slices and call frames wait on
# per-type free lists of fixed capacity (the twenty-second change of the rustpython-vm patch)
# until the next object of their type takes them. Free more than a list holds at once, take
# back more than it has: every object alive at the same time is its own, and holds what it
# was made with, never what a freed one held.


def distinct(objects):
    return len({id(o) for o in objects}) == len(objects)


# Three rounds: each frees far more of every type than its list keeps (2,000 tuples, 200
# frames, 100 numbers, 80 dicts and lists, 6 ranges, 1 slice), then makes as many again.
for round_ in range(3):
    base = 10**6 * round_
    ints = [base + i * 7 for i in range(3000)]
    floats = [i / 8 + round_ for i in range(3000)]
    complexes = [complex(i, -round_) for i in range(300)]
    tuples = [(i, round_) for i in range(5000)]
    dicts = [{"n": i, "r": round_} for i in range(500)]
    lists = [[i, round_] for i in range(500)]
    ranges = [range(i, i + round_ + 1) for i in range(50)]
    slices = [slice(i, i + 1) for i in range(20)]
    made = [ints, floats, complexes, tuples, dicts, lists, ranges, slices]
    print(round_, [distinct(kind) for kind in made])
    print(
        sum(ints) - 3000 * base,
        sum(floats),
        sum(c.real - c.imag for c in complexes),
        sum(a + b for a, b in tuples),
        sum(d["n"] + d["r"] for d in dicts),
        sum(x + y for x, y in lists),
        sum(len(r) for r in ranges),
        [s.start for s in slices][-3:],
    )
    del ints, floats, complexes, tuples, dicts, lists, ranges, slices, made


# Frames: recursion deeper than the frame list, then the calls that reuse them.
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)


def pair(n):
    return (n, [n], {"n": n})


print([depth(n) for n in (0, 1, 250, 600, 3)])
print([pair(n) for n in range(3)], sum(pair(n)[0] for n in range(1000)))


# Generators keep their frames while suspended; finishing them frees the frames.
gens = [iter(range(i, i + 3)) for i in range(300)]
firsts = [next(g) for g in gens]
print(sum(firsts), sum(sum(g) for g in gens))


def counter(n):
    for i in range(n):
        yield i * i


alive = [counter(5) for _ in range(400)]
print(sum(next(g) + next(g) for g in alive), distinct(alive))
del alive
print(sum(sum(counter(k)) for k in range(50)))

# A value freed while another of its type is being made stays freed: a swap through tuples,
# a dict rebuilt from its own items, a list of lists replaced by its copy.
a, b = 1.5, 2.5
for _ in range(1000):
    a, b = b, a
d = {i: (i, -i) for i in range(300)}
for _ in range(3):
    d = {k: (v[1], v[0]) for k, v in d.items()}
rows = [[i] * 3 for i in range(200)]
for _ in range(5):
    rows = [list(r) for r in rows]
print(a, b, d[299], sum(r[2] for r in rows), distinct(rows))
