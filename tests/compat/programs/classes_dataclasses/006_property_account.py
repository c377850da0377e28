class Account:
    def __init__(self, owner: str, balance: float = 0.0):
        self.owner = owner
        self._balance = balance
        self._history: list[tuple[str, float]] = []

    @property
    def balance(self) -> float:
        return self._balance

    @property
    def is_overdrawn(self) -> bool:
        return self._balance < 0

    def apply(self, kind: str, amount: float) -> None:
        delta = amount if kind == "deposit" else -amount
        self._balance += delta
        self._history.append((kind, amount))

    def __repr__(self):
        return f"Account(owner={self.owner!r}, balance={self._balance:.2f})"

acct = Account("Rina", 100.0)
for kind, amt in [("deposit", 50), ("withdraw", 30.5), ("withdraw", 200), ("deposit", 75.25)]:
    acct.apply(kind, amt)
    print(f"{kind:<8} {amt:>7.2f} -> {acct.balance:>8.2f} overdrawn={acct.is_overdrawn}")
print(acct)
try:
    acct.balance = 1_000_000
except AttributeError as e:
    print("AttributeError:", "read-only property" if "setter" in str(e) or "can't set" in str(e) else e)
