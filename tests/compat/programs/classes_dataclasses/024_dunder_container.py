class Inventory:
    def __init__(self):
        self._stock: dict[str, int] = {}

    def add(self, sku: str, qty: int) -> "Inventory":
        self._stock[sku] = self._stock.get(sku, 0) + qty
        return self

    def __len__(self):
        return len(self._stock)

    def __contains__(self, sku):
        return self._stock.get(sku, 0) > 0

    def __getitem__(self, sku):
        return self._stock[sku]

    def __iter__(self):
        return iter(sorted(self._stock.items()))

    def __bool__(self):
        return any(v > 0 for v in self._stock.values())

    def __repr__(self):
        return f"Inventory({dict(sorted(self._stock.items()))})"

inv = Inventory().add("bolt", 100).add("nut", 40).add("bolt", -20).add("gear", 0)
print(inv, len(inv))
print("gear" in inv, "bolt" in inv, inv["nut"])
for sku, qty in inv:
    print(f"  {sku}: {qty}")
print(bool(inv), bool(Inventory()))
try:
    inv["spring"]
except KeyError as e:
    print("missing sku:", e)
