x = 1
# --- cell ---
# sluice: return_code = 1
# sluice: stderr_contains = ["NameError"]
x = 2
print(undefined_name)
# --- cell ---
print(x)
