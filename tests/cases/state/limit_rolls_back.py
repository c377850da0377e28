counter = {"n": 1}
items = [1, 2, 3]
# --- cell ---
# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
counter["n"] = 999
items.append(4)
new_name = "should vanish"
print("partial output survives")
while True:
    pass
# --- cell ---
print(counter, items, "new_name" in globals())
