import math

monthly_growth = [0.05, -0.02, 0.10, 0.03, -0.01, 0.07]
factors = [1 + g for g in monthly_growth]
total = math.prod(factors)
print(f"cumulative growth: {total - 1:.4%}")
geo_mean = total ** (1 / len(factors)) - 1
print(f"geometric mean monthly: {geo_mean:.4%}")
print("prod of ints:", math.prod(range(1, 11)), "empty prod:", math.prod([]))
print("prod with start:", math.prod([2, 3], start=10))
import statistics
print("statistics.geometric_mean:", round(statistics.geometric_mean(factors) - 1, 6))
print("harmonic mean speeds:", round(statistics.harmonic_mean([60, 40]), 4))
