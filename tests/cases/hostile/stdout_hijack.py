import sys
sys.stdout = None
sys.stderr = None
# --- cell ---
# sluice: return_code = 1
# sluice: stderr_contains = ["ZeroDivisionError"]
print("each cell starts with working streams")
1 / 0
