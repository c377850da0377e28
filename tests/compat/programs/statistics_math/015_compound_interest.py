import math

principal = 10_000
rate = 0.045
for years in [1, 5, 10, 30]:
    yearly = principal * (1 + rate) ** years
    monthly = principal * (1 + rate / 12) ** (12 * years)
    continuous = principal * math.exp(rate * years)
    print(f"{years:2d}y yearly={yearly:12,.2f} monthly={monthly:12,.2f} cont={continuous:12,.2f}")
doubling = math.log(2) / math.log(1 + rate)
print(f"doubling time: {doubling:.2f} years (rule of 72: {72 / (rate * 100):.2f})")
print("expm1 small:", math.expm1(1e-10), "log1p:", math.log1p(1e-10))
