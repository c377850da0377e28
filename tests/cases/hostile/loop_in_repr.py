# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
class Forever:
    def __repr__(self):
        while True:
            pass
Forever()
