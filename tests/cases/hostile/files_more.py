import io, os, pathlib, shutil, glob, tempfile
results = []
def attempt(name, fn):
    try:
        fn()
        results.append(name + " LEAKED")
    except Exception as e:
        results.append(name + " blocked")
attempt("io.open", lambda: io.open("/etc/passwd").read())
attempt("os.open", lambda: os.open("/etc/passwd", os.O_RDONLY))
attempt("pathlib", lambda: pathlib.Path("/etc/hostname").read_text())
attempt("shutil.copy", lambda: shutil.copy("/etc/passwd", "/tmp/p"))
attempt("tempfile", lambda: tempfile.mkstemp())
attempt("proc environ", lambda: open("/proc/self/environ", "rb").read())
attempt("scandir", lambda: list(os.scandir("/etc")))
attempt("chdir", lambda: os.chdir("/etc"))
attempt("symlink", lambda: os.symlink("/etc/passwd", "p"))
print("\n".join(results))
print("glob:", glob.glob("/*"), list(os.walk("/")))
