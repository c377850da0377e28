import json
from dataclasses import dataclass, asdict

@dataclass
class Item:
    sku: str
    qty: int
    price: float

class CartEncoder(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, Item):
            d = asdict(o)
            d["line_total"] = round(o.qty * o.price, 2)
            return d
        return super().default(o)

cart = {"cart_id": "c-9", "items": [Item("A-1", 2, 9.99), Item("B-7", 1, 24.5), Item("C-3", 3, 0.1)]}
text = json.dumps(cart, cls=CartEncoder, indent=2)
print(text)
back = json.loads(text)
print("sum:", round(sum(i["line_total"] for i in back["items"]), 2))
