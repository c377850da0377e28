# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
import math
math.factorial(10 ** 7)
