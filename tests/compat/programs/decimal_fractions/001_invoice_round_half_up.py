from decimal import Decimal, ROUND_HALF_UP

CENT = Decimal("0.01")
items = [("Widget", "19.995", 3), ("Gadget", "4.125", 7), ("Cable", "0.335", 10)]
TAX = Decimal("0.0825")

subtotal = Decimal("0")
for name, price, qty in items:
    line = (Decimal(price) * qty).quantize(CENT, rounding=ROUND_HALF_UP)
    subtotal += line
    print(f"{name:8} {qty:3d} x {price:>7} = {line:>8}")
tax = (subtotal * TAX).quantize(CENT, rounding=ROUND_HALF_UP)
print(f"{'subtotal':>24} {subtotal:>8}")
print(f"{'tax 8.25%':>24} {tax:>8}")
print(f"{'total':>24} {subtotal + tax:>8}")
