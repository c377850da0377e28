# sluice: stdout_contains = ["done"]
# sluice: value_repr_contains = ["[sluice: repr truncated"]
big = list(range(300_000))
print("done")
big
