# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
try:
    raise ValueError("x")
finally:
    while True:
        pass
