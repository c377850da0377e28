class TransientError(Exception):
    pass

class FlakyService:
    def __init__(self, failures_before_success):
        self.remaining = failures_before_success
        self.calls = 0

    def fetch(self, key):
        self.calls += 1
        if self.remaining > 0:
            self.remaining -= 1
            raise TransientError(f"temporary failure fetching {key} (call {self.calls})")
        return {"key": key, "value": len(key) * 3}

def with_retries(fn, *args, attempts=3):
    last = None
    for attempt in range(1, attempts + 1):
        try:
            return fn(*args), attempt
        except TransientError as e:
            last = e
            print(f"  attempt {attempt} failed: {e}")
    raise RuntimeError(f"gave up after {attempts} attempts") from last

for failures in (0, 2, 5):
    svc = FlakyService(failures)
    print(f"service with {failures} failures:")
    try:
        result, attempt = with_retries(svc.fetch, "orders")
        print(f"  success on attempt {attempt}: {result}")
    except RuntimeError as e:
        print(f"  {e}; last cause: {e.__cause__}")
