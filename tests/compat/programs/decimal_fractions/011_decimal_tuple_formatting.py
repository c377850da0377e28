from decimal import Decimal

prices = [Decimal("1234.5"), Decimal("0.00042"), Decimal("-7.000"), Decimal("1E+3"), Decimal("19.99")]
for p in prices:
    print(f"{str(p):>9} {p:>12,.2f} {p.normalize()!s:>8} exp={p.as_tuple().exponent} sci={p:.2e}")
print(Decimal("1.10") + Decimal("2.20"), Decimal("1.10") * Decimal("2.20"))
print(Decimal("3.14159").quantize(Decimal("1.000")), Decimal("10").scaleb(-2))
print(Decimal("2.50") == Decimal("2.5"), Decimal("0.1") == 0.1, Decimal(0.5) == 0.5)
print(sorted([Decimal("2.5"), Decimal("-1"), Decimal("2.50"), Decimal("0.3")]))
