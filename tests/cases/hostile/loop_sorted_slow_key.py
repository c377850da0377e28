# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
def slow(x):
    total = 0
    for i in range(10_000):
        total += i
    return total
sorted(range(10 ** 6), key=slow)
