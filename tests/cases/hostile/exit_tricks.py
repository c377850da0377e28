# sluice: return_code = 7
try:
    raise SystemExit(7)
finally:
    print("finally runs")
