import os
attempts = {
    "open /etc/passwd": lambda: open("/etc/passwd").read(),
    "open relative": lambda: open("secrets.txt").read(),
    "write file": lambda: open("/tmp/x", "w").write("x"),
    "listdir /": lambda: os.listdir("/"),
    "listdir .": lambda: os.listdir("."),
    "stat": lambda: os.stat("/etc/hostname"),
    "mkdir": lambda: os.mkdir("/tmp/sluice-escape"),
    "remove": lambda: os.remove("/etc/hosts"),
}
for name, attempt in attempts.items():
    try:
        result = attempt()
        print(name, "LEAKED", repr(result)[:40])
    except Exception as e:
        print(name, "->", isinstance(e, OSError) and "OSError" or type(e).__name__)
