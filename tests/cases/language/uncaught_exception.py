# sluice: return_code = 1
# sluice: stderr_contains = ["Traceback (most recent call last)", "ZeroDivisionError: division by zero", "in ratio"]
def ratio(a, b):
    return a / b

print("before")
ratio(1, 0)
print("never")
