import weakref, gc
class Node:
    pass
calls = []
nodes = [Node() for _ in range(10_000)]
refs = [weakref.ref(n, lambda r: calls.append(1)) for n in nodes]
del nodes
gc.collect()
print(len(calls))
