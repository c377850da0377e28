# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
import re
re.match(r"(a+)+$", "a" * 40 + "b")
