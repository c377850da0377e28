changes = {"AAPL": 1.234, "MSFT": -0.56, "GOOG": 0.0, "AMZN": -3.1, "NVDA": 12.5}

for sym, pct in changes.items():
    arrow = "▲" if pct > 0 else ("▼" if pct < 0 else "•")
    print(f"{sym:<5}{pct:>+8.2f}%  {pct:=+9.3f}  {pct: .1f}  {arrow}")

winners = sorted((s for s, p in changes.items() if p > 0), key=changes.get, reverse=True)
print("Winners:", ", ".join(f"{s}({changes[s]:+.1f})" for s in winners))
print(f"{-42:=10d}|{42:=+10d}|{42:<+10d}|")
