import csv
import io

data = """order_id,customer,amount,status
1001,acme,250.00,paid
1002,globex,99.95,refunded
1003,acme,1200.50,paid
1004,initech,45.00,pending
1005,globex,310.10,paid
"""

totals = {}
for row in csv.DictReader(io.StringIO(data)):
    if row["status"] != "paid":
        continue
    totals[row["customer"]] = totals.get(row["customer"], 0.0) + float(row["amount"])

for customer, amount in sorted(totals.items(), key=lambda kv: kv[1], reverse=True):
    print(f"{customer:10} {amount:10.2f}")
print("paid total:", round(sum(totals.values()), 2))
