import os
results = []
def attempt(name, fn):
    try:
        fn()
        results.append(name + " LEAKED")
    except BaseException as e:
        results.append(name + " blocked")
attempt("popen", lambda: os.popen("id").read())
attempt("execv", lambda: os.execv("/bin/sh", ["sh"]))
attempt("kill", lambda: os.kill(1, 9))
def thread():
    # Without threads in the sandbox a "thread" either fails to start or runs inline.
    import threading
    ran = []
    t = threading.Thread(target=lambda: ran.append(1))
    t.start()
    t.join()
    raise RuntimeError("ran inline" if ran else "did not run")
attempt("thread", thread)
def mp():
    import multiprocessing
    multiprocessing.Process(target=print).start()
attempt("multiprocessing", mp)
def spawn():
    import subprocess
    subprocess.Popen(["/bin/sh", "-c", "true"])
attempt("Popen", spawn)
print("\n".join(results))
