# `sys.monitoring` is CPython 3.12's, so this is not run under the machine's python3 (3.11);
# the expected lines are what CPython 3.12.1 and 3.13.0 print.
# A generator `sum` drains (PyGenerator::drain) is re-instrumented when monitoring starts
# part way: each later resume is reported, as when the generator is resumed item by item.
import sys

monitoring = sys.monitoring
monitoring.use_tool_id(2, "drain-check")
resumed = []
monitoring.register_callback(2, monitoring.events.PY_RESUME, lambda code, offset: resumed.append(code.co_name))


def started_watching():
    for i in range(4):
        if i == 1:
            monitoring.set_events(2, monitoring.events.PY_RESUME)
        yield i


print(sum(started_watching()), resumed)
monitoring.set_events(2, 0)
resumed.clear()
watched = (i for i in range(3))
monitoring.set_events(2, monitoring.events.PY_RESUME)
print(sum(watched), any(i > 5 for i in range(2)), list(i for i in range(2)), resumed)
monitoring.set_events(2, 0)
monitoring.free_tool_id(2)
