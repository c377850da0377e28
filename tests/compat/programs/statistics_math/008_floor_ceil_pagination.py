import math

total_items = [0, 1, 19, 20, 21, 99, 100, 101]
PAGE = 20
for n in total_items:
    pages = math.ceil(n / PAGE)
    last_page_items = n - (pages - 1) * PAGE if pages else 0
    print(f"{n:4d} items -> {pages} page(s), last has {last_page_items}")
print("floor/ceil negatives:", math.floor(-2.5), math.ceil(-2.5), math.trunc(-2.5), int(-2.5))
print("floor division:", -7 // 2, -7 % 2, divmod(-7, 2))
print("ceil via //:", -(-101 // 20))
