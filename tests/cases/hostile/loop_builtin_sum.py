# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
sum(range(10 ** 15))
