from itertools import accumulate
import operator

transactions = [("deposit", 500), ("coffee", -4), ("rent", -350), ("refund", 25),
                ("groceries", -87), ("salary", 1200), ("transfer", -400)]
amounts = [a for _, a in transactions]
balances = list(accumulate(amounts, initial=100))
for (label, amt), bal in zip(transactions, balances[1:]):
    print(f"{label:10} {amt:+6d} -> {bal:6d}")

print("low-water mark:", min(balances))
print("running max:", list(accumulate(balances, max)))
print("running product:", list(accumulate([1, 2, 3, 4, 5], operator.mul)))
