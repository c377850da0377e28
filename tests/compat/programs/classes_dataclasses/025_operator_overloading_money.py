from decimal import Decimal

class Money:
    def __init__(self, amount, currency="USD"):
        self.amount = Decimal(str(amount)).quantize(Decimal("0.01"))
        self.currency = currency

    def _check(self, other):
        if other.currency != self.currency:
            raise ValueError(f"currency mismatch: {self.currency} vs {other.currency}")

    def __add__(self, other):
        self._check(other)
        return Money(self.amount + other.amount, self.currency)

    def __mul__(self, factor):
        return Money(self.amount * Decimal(str(factor)), self.currency)

    __rmul__ = __mul__

    def __radd__(self, other):
        return self if other == 0 else self + other

    def __repr__(self):
        return f"Money('{self.amount}', {self.currency!r})"

cart = [Money("19.99"), Money(5), Money("0.10") * 3]
print(cart)
print("subtotal:", sum(cart))
print("with tax:", sum(cart) * 1.0825)
print(2 * Money("1.005"))
try:
    Money(1) + Money(1, "EUR")
except ValueError as e:
    print("error:", e)
