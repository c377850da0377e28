# sluice: return_code = 1
# sluice: stderr_contains = ["Error"]
err = None
for i in range(200):
    try:
        raise ValueError(i) from err
    except ValueError as e:
        err = e
raise err
