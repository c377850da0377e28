def running_average():
    total = 0.0
    count = 0
    avg = None
    while True:
        value = yield avg
        if value is None:
            continue
        total += value
        count += 1
        avg = total / count

gen = running_average()
next(gen)
for latency in [120, 80, 100, 300, 95]:
    current = gen.send(latency)
    print(f"latency={latency:>4} running_avg={current:.2f}")
gen.close()
try:
    gen.send(5)
except StopIteration:
    print("generator closed")
