from dataclasses import dataclass, field

@dataclass
class LineItem:
    sku: str
    qty: int
    unit_price: float

@dataclass
class Order:
    order_id: int
    customer: str
    items: list[LineItem] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)

    def total(self) -> float:
        return sum(i.qty * i.unit_price for i in self.items)

raw = [
    {"order_id": 1, "customer": "acme", "items": [("A1", 2, 9.99), ("B2", 1, 24.5)]},
    {"order_id": 2, "customer": "globex", "items": [("C3", 10, 1.25)]},
    {"order_id": 3, "customer": "acme", "items": []},
]
orders = [Order(r["order_id"], r["customer"], [LineItem(*t) for t in r["items"]]) for r in raw]
orders[0].tags.append("priority")
for o in orders:
    print(f"#{o.order_id} {o.customer:<7} items={len(o.items)} total={o.total():.2f} tags={o.tags}")
print(orders[1])
print(orders[2].tags is orders[1].tags)
