# Nothing a script names reaches the host: the tree holds /workspace and /tmp, nothing else,
# and every size it controls is bounded.
# sluice: limits = {"storage_bytes": 100000}
import errno, os, pathlib

def attempt(name, fn):
    try:
        result = fn()
        print(name, "->", repr(result)[:60])
    except Exception as e:
        code = errno.errorcode.get(getattr(e, "errno", None) or 0, "")
        print(name, "->", f"{type(e).__name__} {code}".strip())

attempt("traversal", lambda: open("../../../../etc/passwd").read())
attempt("absolute", lambda: open("/etc/passwd").read())
attempt("proc", lambda: open("/proc/self/environ", "rb").read())
attempt("write outside", lambda: open("/etc/evil", "w"))
attempt("write root", lambda: open("/evil", "w"))
attempt("mkdir outside", lambda: os.mkdir("/usr/evil"))
attempt("remove workspace", lambda: os.rmdir("/workspace"))
attempt("rename workspace", lambda: os.rename("/workspace", "/tmp/w"))
attempt("symlink", lambda: os.symlink("/etc/passwd", "link"))
attempt("hard link", lambda: os.link("a", "b"))
attempt("os.open", lambda: os.open("x", os.O_CREAT | os.O_WRONLY))
attempt("fd open", lambda: open(3))
attempt("nul", lambda: open("a\0b", "w"))
attempt("long name", lambda: open("x" * 300, "w"))
attempt("long path", lambda: open("/".join(["d"] * 3000)))
attempt("control character", lambda: open("tab\there", "w"))
attempt("not UTF-8", lambda: open(b"\xff.csv", "w"))
attempt("stdout by descriptor", lambda: open(1, "w", closefd=False).fileno())
attempt("dir into itself", lambda: (os.makedirs("d/e"), os.rename("d", "d/e/f")))
attempt("listing", lambda: sorted(os.listdir("/")))
attempt("dotdot listing", lambda: sorted(os.listdir("../..")))
attempt("realpath", lambda: os.path.realpath("../../etc"))

# The storage limit: one big file, then many small ones.
attempt("big write", lambda: open("big.bin", "wb").write(b"x" * 200_000))
print("after big write:", os.path.exists("big.bin") and os.path.getsize("big.bin"))
with open("fill.bin", "wb") as f:
    f.write(b"y" * 90_000)
attempt("past the limit", lambda: open("more.bin", "wb").write(b"z" * 20_000))
os.remove("fill.bin")
attempt("after freeing", lambda: open("more.bin", "wb").write(b"z" * 20_000))

made = 0
try:
    for i in range(20_000):
        open(f"/tmp/f{i}", "w").close()
        made += 1
except OSError as e:
    print("many files stop with", errno.errorcode[e.errno], "after", made)
print("removing them:", [os.remove(f"/tmp/f{i}") for i in range(made)].count(None) == made)
print(pathlib.Path("/tmp/new.txt").write_text("still writable after the flood"))
