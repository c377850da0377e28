def summarize(values):
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return n, mean, var

latencies = [120, 135, 98, 210, 143, 101, 99, 187]
n, mean, var = summarize(latencies)
std = var ** 0.5

print(f"{n=}")
print(f"{mean=:.2f}")
print(f"{std=:.3f}")
print(f"{max(latencies)=}")
print(f"{min(latencies) = }")
label = "p-latency"
print(f"{label=}")
print(f"{label!r:>15}")
