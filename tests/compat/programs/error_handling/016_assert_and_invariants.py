def allocate(budget, weights):
    assert budget >= 0, f"budget must be non-negative, got {budget}"
    total_w = sum(weights.values())
    if total_w == 0:
        raise ZeroDivisionError("weights sum to zero")
    shares = {k: round(budget * w / total_w, 2) for k, w in weights.items()}
    drift = round(budget - sum(shares.values()), 2)
    first = min(shares)
    shares[first] = round(shares[first] + drift, 2)
    return shares

cases = [
    (1000, {"eng": 3, "sales": 2, "ops": 1}),
    (-5, {"eng": 1}),
    (100, {"eng": 0, "ops": 0}),
    (100, {"a": 1, "b": 1, "c": 1}),
]
for budget, weights in cases:
    try:
        shares = allocate(budget, weights)
        print(budget, "->", shares, "sum", round(sum(shares.values()), 2))
    except AssertionError as e:
        print("AssertionError:", e)
    except ZeroDivisionError as e:
        print("ZeroDivisionError:", e)
