# sluice: cpython = true
import json, re, math, statistics, csv, io
from collections import Counter, defaultdict, OrderedDict, deque, namedtuple
from itertools import groupby, islice, chain, accumulate, combinations
from functools import reduce, lru_cache, partial

data = json.loads('[{"id": "E1", "amount": 120.5, "tags": ["travel"]}, {"id": "E2", "amount": 80, "tags": []}]')
print(json.dumps(data[0], sort_keys=True), json.dumps({"k": None, "v": [1.5, True]}))
print(re.findall(r"E(\d+)", "E1 E22 X3"), re.sub(r"\s+", " ", "a   b\tc"), bool(re.match(r"^\w+@\w+\.com$", "x@y.com")))
print(math.isclose(math.sqrt(2) ** 2, 2), math.floor(-2.5), math.gcd(12, 18), round(math.pi, 5))
print(statistics.mean([1, 2, 3, 4]), statistics.median([5, 1, 3]), round(statistics.stdev([2, 4, 4, 4, 5, 5, 7, 9]), 4))
print(Counter("mississippi").most_common(2))
groups = defaultdict(list)
for word in ["apple", "avocado", "banana"]:
    groups[word[0]].append(word)
print(dict(groups), list(OrderedDict(b=1, a=2)), deque([1, 2, 3], maxlen=2))
Pair = namedtuple("Pair", "left right")
print(Pair(1, 2), Pair(1, 2).right)
print([(k, len(list(g))) for k, g in groupby("aaabbc")], list(islice(chain("ab", "cd"), 3)))
print(list(accumulate([1, 2, 3, 4])), len(list(combinations(range(5), 2))))
print(reduce(lambda a, b: a * b, range(1, 6)), partial(int, base=2)("101"))


@lru_cache(maxsize=None)
def ways(n):
    return 1 if n < 2 else ways(n - 1) + ways(n - 2)


print(ways(60))
buf = io.StringIO()
writer = csv.DictWriter(buf, fieldnames=["id", "amount"])
writer.writeheader()
writer.writerow({"id": "E1", "amount": 3.5})
print(buf.getvalue().splitlines())
print([row["amount"] for row in csv.DictReader(io.StringIO("id,amount\nA,1\nB,2\n"))])
