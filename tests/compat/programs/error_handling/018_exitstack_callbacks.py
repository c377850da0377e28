from contextlib import ExitStack

events = []

def open_resource(name, fail=False):
    events.append(f"open {name}")
    if fail:
        raise OSError(f"cannot open {name}")
    return name

def run(names, fail_on=None):
    with ExitStack() as stack:
        for n in names:
            res = open_resource(n, fail=(n == fail_on))
            stack.callback(events.append, f"close {res}")
        events.append("work done")

run(["db", "cache"])
try:
    run(["db", "queue", "cache"], fail_on="queue")
except OSError as e:
    events.append(f"error: {e}")
print("\n".join(events))
