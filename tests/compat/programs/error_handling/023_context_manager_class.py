class Transaction:
    def __init__(self, ledger):
        self.ledger = ledger
        self.pending = []

    def __enter__(self):
        return self

    def add(self, entry, amount):
        if not isinstance(amount, (int, float)):
            raise TypeError(f"amount for {entry!r} must be numeric")
        self.pending.append((entry, amount))

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.ledger.extend(self.pending)
            print(f"committed {len(self.pending)} entries")
        else:
            print(f"rolled back {len(self.pending)} entries due to {exc_type.__name__}: {exc}")
        return exc_type is TypeError

ledger = []
with Transaction(ledger) as tx:
    tx.add("coffee", -3.5)
    tx.add("refund", 12)
with Transaction(ledger) as tx:
    tx.add("lunch", -11)
    tx.add("mystery", "ten")
try:
    with Transaction(ledger) as tx:
        tx.add("rent", -900)
        raise RuntimeError("bank offline")
except RuntimeError as e:
    print("propagated:", e)
print(ledger)
