def human(seconds):
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        q, seconds = divmod(seconds, size)
        if q:
            parts.append(f"{q}{unit}")
    return " ".join(parts) or "0s"

jobs = {"build": 754, "test": 3725, "deploy": 59, "nightly": 93784, "noop": 0}
for name, secs in sorted(jobs.items(), key=lambda kv: -kv[1]):
    print(f"{name:8} {secs:6d}s  {human(secs)}")

from datetime import timedelta
print(timedelta(seconds=93784), "|", timedelta(seconds=-30), "|", timedelta(microseconds=1500))
