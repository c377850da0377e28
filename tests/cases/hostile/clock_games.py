import time, datetime
before = time.time()
time.sleep(10 ** 6)  # a million seconds pass on the sandbox clock, none on the host's
after = time.time()
print(round(after - before) >= 10 ** 6, datetime.datetime.fromtimestamp(after).year >= 2026)
try:
    time.sleep(-1)
except ValueError:
    print("negative sleep refused")
