from itertools import islice

def batched(iterable, size):
    it = iter(iterable)
    while True:
        chunk = list(islice(it, size))
        if not chunk:
            return
        yield chunk

user_ids = range(101, 124)
for n, batch in enumerate(batched(user_ids, 5), start=1):
    print(f"batch {n}: {len(batch)} ids, first={batch[0]}, last={batch[-1]}")

rows = ({"id": i, "score": (i * 37) % 100} for i in range(12))
for chunk in batched(rows, 4):
    print([r["score"] for r in chunk], "avg", sum(r["score"] for r in chunk) / len(chunk))
