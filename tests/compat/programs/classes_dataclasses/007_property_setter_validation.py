class Product:
    def __init__(self, name, price):
        self.name = name
        self.price = price

    @property
    def price(self):
        return self._price

    @price.setter
    def price(self, value):
        if value < 0:
            raise ValueError(f"price for {self.name} cannot be negative: {value}")
        self._price = round(float(value), 2)

    def __repr__(self):
        return f"Product({self.name!r}, {self.price})"

catalog = []
for name, price in [("pen", 1.499), ("book", 12), ("broken", -3), ("lamp", "29.5")]:
    try:
        catalog.append(Product(name, float(price)))
    except ValueError as e:
        print("rejected:", e)
print(catalog)
catalog[0].price = 2
print(catalog[0], catalog[0].price)
