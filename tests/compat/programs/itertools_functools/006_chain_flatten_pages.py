from itertools import chain

pages = [
    [{"id": 1, "tag": "a"}, {"id": 2, "tag": "b"}],
    [],
    [{"id": 3, "tag": "a"}],
    [{"id": 4, "tag": "c"}, {"id": 5, "tag": "a"}],
]
all_rows = list(chain.from_iterable(pages))
print("ids:", [r["id"] for r in all_rows])
tags = sorted(set(chain.from_iterable(r["tag"] for r in all_rows)))
print("tags:", tags)
extra = chain([0], range(3), "xy")
print("mixed chain:", list(extra))
