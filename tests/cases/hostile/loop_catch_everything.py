# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
# A loop that swallows every exception cannot swallow the time limit.
while True:
    try:
        while True:
            pass
    except BaseException:
        pass
