from itertools import islice

def batched(iterable, n):
    it = iter(iterable)
    while batch := list(islice(it, n)):
        yield batch

records = [f"rec-{i:03d}" for i in range(1, 12)]
for i, batch in enumerate(batched(records, 4), 1):
    print(f"batch {i}: {batch}")

def squares():
    n = 0
    while True:
        yield n * n
        n += 1

print("squares 5..9:", list(islice(squares(), 5, 10)))
print("every 3rd:", list(islice(range(20), 0, None, 3)))
