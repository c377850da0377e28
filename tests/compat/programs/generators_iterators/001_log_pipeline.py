import io

LOG = io.StringIO("""\
2024-05-01 10:00:01 INFO user=alice action=login
2024-05-01 10:00:04 ERROR user=bob action=upload size=0
2024-05-01 10:01:11 INFO user=carol action=login
# comment line
2024-05-01 10:02:30 WARN user=alice action=upload size=9000000
2024-05-01 10:03:00 ERROR user=alice action=delete
""")

def read_lines(f):
    for line in f:
        yield line.rstrip("\n")

def skip_comments(lines):
    return (l for l in lines if l and not l.startswith("#"))

def parse(lines):
    for l in lines:
        date, time, level, *kvs = l.split()
        yield {"ts": f"{date} {time}", "level": level, **dict(kv.split("=", 1) for kv in kvs)}

def only(level, records):
    yield from (r for r in records if r["level"] == level)

for rec in only("ERROR", parse(skip_comments(read_lines(LOG)))):
    print(rec["ts"], rec["user"], rec["action"])
