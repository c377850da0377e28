import math

readings = [21.5, float("nan"), 22.1, float("inf"), -float("inf"), 20.9, float("nan")]
valid = [r for r in readings if math.isfinite(r)]
print("valid:", valid)
print("nan count:", sum(math.isnan(r) for r in readings), "inf count:", sum(math.isinf(r) for r in readings))
print("mean valid:", round(math.fsum(valid) / len(valid), 4))
nan = float("nan")
print("nan == nan:", nan == nan, "| nan in list:", nan in [nan])
print("max with nan first:", max([nan, 1.0]), "| sorted:", sorted([3.0, 1.0, 2.0]))
print(math.inf > 1e308, -math.inf < -1e308, math.copysign(1, -0.0), math.nan != math.nan)
