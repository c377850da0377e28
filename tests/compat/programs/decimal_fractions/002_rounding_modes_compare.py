from decimal import Decimal, ROUND_HALF_UP, ROUND_HALF_EVEN, ROUND_DOWN, ROUND_CEILING, ROUND_FLOOR

values = ["2.345", "2.355", "-2.345", "1.005", "0.125"]
modes = [("HALF_UP", ROUND_HALF_UP), ("HALF_EVEN", ROUND_HALF_EVEN), ("DOWN", ROUND_DOWN),
         ("CEILING", ROUND_CEILING), ("FLOOR", ROUND_FLOOR)]
print("value   " + " ".join(f"{m:>9}" for m, _ in modes))
for v in values:
    d = Decimal(v)
    print(f"{v:7} " + " ".join(f"{str(d.quantize(Decimal('0.01'), rounding=r)):>9}" for _, r in modes))
print("float 1.005 ->", Decimal(1.005))
print("round() on Decimal:", round(Decimal("2.5")), round(Decimal("3.5")), round(Decimal("2.345"), 2))
