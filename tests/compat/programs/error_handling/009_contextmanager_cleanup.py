from contextlib import contextmanager

@contextmanager
def step(name, log):
    log.append(f"start {name}")
    try:
        yield
    except ValueError as e:
        log.append(f"handled in {name}: {e}")
    else:
        log.append(f"ok {name}")
    finally:
        log.append(f"end {name}")

log = []
with step("extract", log):
    rows = [1, 2, 3]
with step("transform", log):
    rows = [r * 10 for r in rows]
    raise ValueError("column 'price' has text")
try:
    with step("load", log):
        raise KeyError("table")
except KeyError as e:
    log.append(f"propagated KeyError {e}")
print("\n".join(log))
print("rows:", rows)
