# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
while True:
    try:
        raise ValueError("storm")
    except ValueError:
        pass
