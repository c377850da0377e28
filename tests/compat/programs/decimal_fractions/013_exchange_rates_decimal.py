from decimal import Decimal, ROUND_HALF_UP, getcontext

getcontext().prec = 28
rates = {"EUR": Decimal("0.9187"), "GBP": Decimal("0.7893"), "JPY": Decimal("151.42")}
minor_units = {"EUR": 2, "GBP": 2, "JPY": 0}
amounts_usd = [Decimal("10"), Decimal("99.99"), Decimal("1234.56")]

for usd in amounts_usd:
    row = [f"USD {usd:>8}"]
    for cur, rate in rates.items():
        exp = Decimal(1).scaleb(-minor_units[cur])
        converted = (usd * rate).quantize(exp, rounding=ROUND_HALF_UP)
        row.append(f"{cur} {converted:>10}")
    print(" | ".join(row))
back = (Decimal("1000") / rates["EUR"]).quantize(Decimal("0.0001"))
print("1000 EUR in USD:", back)
