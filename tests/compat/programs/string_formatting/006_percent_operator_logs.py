events = [
    ("INFO", "worker-1", 12, 0.0312),
    ("WARN", "worker-2", 7, 1.5),
    ("ERROR", "worker-1", 3, 12.75),
]

for level, worker, count, secs in events:
    print("[%-5s] %s processed %3d items in %6.2fs" % (level, worker, count, secs))

stats = {"ok": 22, "failed": 3}
print("ok=%(ok)d failed=%(failed)d" % stats)
print("ratio: %.1f%%" % (100.0 * stats["failed"] / (stats["ok"] + stats["failed"])))
print("hex id: %#06x, octal: %o, sci: %.3e" % (48879, 8, 123456.789))
print("repr: %r, str: %s" % ("a'b", "a'b"))
