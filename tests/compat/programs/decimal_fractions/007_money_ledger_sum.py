from decimal import Decimal

ledger = [
    {"desc": "opening", "amount": "1500.00"},
    {"desc": "coffee", "amount": "-3.10"},
    {"desc": "coffee", "amount": "-3.10"},
    {"desc": "refund", "amount": "0.20"},
    {"desc": "fee", "amount": "-0.10"},
    {"desc": "interest", "amount": "1.2345"},
]
float_total = sum(float(e["amount"]) for e in ledger)
dec_total = sum(Decimal(e["amount"]) for e in ledger)
print("float total:  ", float_total)
print("decimal total:", dec_total)
print("rounded:", dec_total.quantize(Decimal("0.01")))
by_desc = {}
for e in ledger:
    by_desc[e["desc"]] = by_desc.get(e["desc"], Decimal(0)) + Decimal(e["amount"])
for k in sorted(by_desc):
    print(f"{k:9} {by_desc[k]:>10}")
