# sluice: return_code = 4
import sys
print("leaving")
sys.exit(4)
