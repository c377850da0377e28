from decimal import Decimal, ROUND_DOWN

def split(total, people):
    total = Decimal(total)
    share = (total / people).quantize(Decimal("0.01"), rounding=ROUND_DOWN)
    shares = [share] * people
    remainder = total - share * people
    cents = int(remainder / Decimal("0.01"))
    for i in range(cents):
        shares[i] += Decimal("0.01")
    return shares

for total, n in [("100.00", 3), ("57.35", 4), ("0.05", 3), ("1000", 7)]:
    parts = split(total, n)
    print(f"{total:>7} / {n}: {[str(p) for p in parts]} sum={sum(parts)}")
