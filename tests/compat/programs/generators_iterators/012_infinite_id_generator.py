import itertools

def id_factory(prefix, start=1):
    for n in itertools.count(start):
        yield f"{prefix}-{n:04d}"

order_ids = id_factory("ORD")
invoice_ids = id_factory("INV", start=500)

customers = ["acme", "globex", "initech"]
assigned = {c: next(order_ids) for c in customers}
print(assigned)
print([next(invoice_ids) for _ in range(3)])
print(next(order_ids))
colors = itertools.cycle(["red", "green", "blue"])
print([(c, next(colors)) for c in customers + ["umbrella"]])
print(list(itertools.repeat("-", 3)))
