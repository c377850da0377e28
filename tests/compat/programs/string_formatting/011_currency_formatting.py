def money(amount, symbol="$"):
    sign = "-" if amount < 0 else ""
    return f"{sign}{symbol}{abs(amount):,.2f}"

transactions = [
    {"desc": "Salary", "amount": 5200.00},
    {"desc": "Rent", "amount": -1850.00},
    {"desc": "Groceries", "amount": -312.47},
    {"desc": "Refund", "amount": 19.99},
    {"desc": "Car payment", "amount": -12045.1},
]

balance = 0.0
for t in transactions:
    balance += t["amount"]
    print(f"{t['desc']:<12}{money(t['amount']):>14}{money(balance):>14}")
print(f"{'Ending':<12}{'':>14}{money(balance):>14}")
print("EUR:", money(1234567.891, "€"))
