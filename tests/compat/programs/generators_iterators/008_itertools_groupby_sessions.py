from itertools import groupby
from operator import itemgetter

events = [
    {"user": "u1", "page": "/home", "t": 1},
    {"user": "u2", "page": "/home", "t": 2},
    {"user": "u1", "page": "/cart", "t": 5},
    {"user": "u3", "page": "/about", "t": 6},
    {"user": "u1", "page": "/checkout", "t": 9},
    {"user": "u2", "page": "/search", "t": 11},
]

events.sort(key=itemgetter("user", "t"))
for user, grp in groupby(events, key=itemgetter("user")):
    pages = [e["page"] for e in grp]
    print(f"{user}: {' -> '.join(pages)} ({len(pages)} views)")

by_section = groupby(sorted(e["page"].split("/")[1] for e in events))
print({k: len(list(g)) for k, g in by_section})
