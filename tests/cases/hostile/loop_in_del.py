# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
class Sticky:
    def __del__(self):
        while True:
            pass
s = Sticky()
del s
