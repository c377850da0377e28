# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
import sys
def tracer(frame, event, arg):
    while True:
        pass
sys.settrace(tracer)
def f():
    return 1
f()
