# sluice: return_code = 1
# sluice: stderr_contains = ["KeyboardInterrupt"]
raise KeyboardInterrupt
