# sluice: return_code = 1
# sluice: stderr_contains = ["SyntaxError"]
print("this cell never starts"
