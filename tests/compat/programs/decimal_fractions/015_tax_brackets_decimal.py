from decimal import Decimal, ROUND_HALF_UP

BRACKETS = [(Decimal("11000"), Decimal("0.10")), (Decimal("44725"), Decimal("0.12")),
            (Decimal("95375"), Decimal("0.22")), (None, Decimal("0.24"))]

def tax(income):
    owed, lower = Decimal(0), Decimal(0)
    for upper, rate in BRACKETS:
        top = income if upper is None else min(income, upper)
        if top > lower:
            owed += (top - lower) * rate
        if upper is None or income <= upper:
            break
        lower = upper
    return owed.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)

for inc in ["9500", "42000.50", "88000", "150000"]:
    t = tax(Decimal(inc))
    print(f"income {Decimal(inc):>10,.2f} tax {t:>10,.2f} effective {t / Decimal(inc):.2%}")
