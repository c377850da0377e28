from collections import namedtuple

Trade = namedtuple("Trade", "symbol side qty price")
trades = [Trade("AAPL", "buy", 10, 189.5), Trade("MSFT", "sell", 5, 410.0),
          Trade("AAPL", "sell", 4, 192.25), Trade("NVDA", "buy", 2, 880.75)]

for t in trades:
    sign = 1 if t.side == "buy" else -1
    print(f"{t.symbol:5} {t.side:4} {t.qty:3d} @ {t.price:8.2f} notional {sign * t.qty * t.price:10.2f}")

fixed = trades[1]._replace(qty=6)
print(fixed)
print(fixed._asdict())
print(Trade._fields, Trade._make(["TSLA", "buy", 1, 250.0]))
