# The container's files are its own tree (/workspace and /tmp, in its memory): the host's
# files are neither readable nor writable, and what the script writes stays in the tree.
import os
attempts = {
    "open /etc/passwd": lambda: open("/etc/passwd").read(),
    "open relative": lambda: open("secrets.txt").read(),
    "stat": lambda: os.stat("/etc/hostname"),
    "remove": lambda: os.remove("/etc/hosts"),
    "write /etc": lambda: open("/etc/sluice-escape", "w").write("x"),
    "mkdir /usr": lambda: os.mkdir("/usr/sluice-escape"),
}
for name, attempt in attempts.items():
    try:
        result = attempt()
        print(name, "LEAKED", repr(result)[:40])
    except Exception as e:
        print(name, "->", isinstance(e, OSError) and "OSError" or type(e).__name__)
open("/tmp/x", "w").write("x")
os.mkdir("/tmp/sluice-escape")
print("listdir /", sorted(os.listdir("/")))
print("listdir /tmp", sorted(os.listdir("/tmp")))
print("listdir .", os.getcwd(), os.listdir("."))
