# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
# sluice: stderr_contains = ["execution_time_exceeded"]
print("spinning")
while True:
    pass
