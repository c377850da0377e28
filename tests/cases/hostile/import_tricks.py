results = []
def attempt(name, fn):
    try:
        value = fn()
        results.append(f"{name} LEAKED {value!r}"[:60])
    except BaseException:
        results.append(name + " blocked")
attempt("__import__ os.system", lambda: __import__("os").system("ls") == 0 or 1 / 0)
attempt("eval", lambda: eval("__import__('subprocess').run(['ls'])"))
attempt("exec", lambda: exec("import socket; socket.create_connection(('127.0.0.1', 22))"))
attempt("compile", lambda: exec(compile("open('/etc/shadow').read()", "x", "exec")))
attempt("importlib posix", lambda: __import__("importlib").import_module("posix").system("ls") == 0 or 1 / 0)
attempt("builtins open", lambda: __builtins__["open" if isinstance(__builtins__, dict) else "__class__"]("/etc/passwd") if isinstance(__builtins__, dict) else __import__("builtins").open("/etc/passwd"))
attempt("ctypes", lambda: __import__("ctypes").CDLL("libc.so.6"))
attempt("_ctypes", lambda: __import__("_ctypes"))
print("\n".join(results))
