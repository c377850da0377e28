import math

print("poker hands C(52,5):", math.comb(52, 5))
print("lottery C(49,6):", f"{math.comb(49, 6):,}")
print("podium P(10,3):", math.perm(10, 3))
print("orderings 8!:", math.factorial(8), math.perm(8))
odds = 1 / math.comb(49, 6)
print(f"jackpot odds: {odds:.3e}")
row = [math.comb(6, k) for k in range(7)]
print("pascal row 6:", row, "sum:", sum(row))
print("comb(5, 7):", math.comb(5, 7))
