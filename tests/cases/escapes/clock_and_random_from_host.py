import time, datetime, random, os
now = time.time()
print(2026 <= datetime.datetime.fromtimestamp(now).year < 2100)
a = time.monotonic(); b = time.monotonic()
print(b > a)
time.sleep(3600)
print(round(time.monotonic() - b) == 3600)
print(len(os.urandom(16)), 0 <= random.random() < 1)
