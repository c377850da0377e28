import signal
results = []
for name, fn in [
    ("alarm", lambda: signal.alarm(1)),
    ("raise_signal", lambda: signal.raise_signal(signal.SIGKILL if hasattr(signal, "SIGKILL") else 9)),
]:
    try:
        fn()
        results.append(name + " returned")
    except BaseException as e:
        results.append(name + " refused")
print("still running;", len(results), "attempts made")
