from decimal import Decimal, ROUND_HALF_EVEN

principal = Decimal("5000.00")
annual_rate = Decimal("0.06")
months = 6
payment = Decimal("850.00")
monthly = annual_rate / 12
balance = principal
print(f"{'month':>5} {'interest':>9} {'principal':>10} {'balance':>10}")
for m in range(1, months + 1):
    interest = (balance * monthly).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)
    pay = min(payment, balance + interest)
    balance = balance + interest - pay
    print(f"{m:5d} {interest:9} {pay - interest:10} {balance:10}")
print("remaining:", balance, "| monthly rate:", monthly)
