import sys
sys.stdout = None
sys.stderr = None
# --- cell ---
# sluice: return_code = 1
# sluice: stderr_contains = ["ZeroDivisionError"]
print("each cell starts with working streams")
1 / 0
# --- cell ---
import sys
del sys.stdout
del sys.stderr
# --- cell ---
# sluice: return_code = 1
# sluice: stderr_contains = ["NameError"]
print("even after they were deleted")
undefined_name
