from typing import NamedTuple

class Trade(NamedTuple):
    symbol: str
    side: str
    qty: int
    price: float
    fee: float = 0.0

    @property
    def notional(self) -> float:
        return self.qty * self.price

rows = [("AAPL", "buy", 10, 189.5), ("MSFT", "sell", 5, 410.0, 1.25), ("AAPL", "sell", 4, 191.0)]
trades = [Trade(*r) for r in rows]
for t in trades:
    print(t, f"notional={t.notional:.2f}")

net = {}
for t in trades:
    net[t.symbol] = net.get(t.symbol, 0) + (t.qty if t.side == "buy" else -t.qty)
print(sorted(net.items()))
print(trades[0]._asdict())
print(trades[0]._replace(qty=20).notional, Trade._fields)
sym, side, *_ = trades[1]
print(sym, side)
