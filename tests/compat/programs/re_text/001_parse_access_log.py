import re
from collections import Counter

LOG = """127.0.0.1 - - [10/Oct/2024:13:55:36 +0000] "GET /index.html HTTP/1.1" 200 2326
10.0.0.5 - bob [10/Oct/2024:13:56:01 +0000] "POST /api/login HTTP/1.1" 401 51
10.0.0.5 - bob [10/Oct/2024:13:56:09 +0000] "POST /api/login HTTP/1.1" 200 98
192.168.1.20 - - [10/Oct/2024:13:57:44 +0000] "GET /static/app.js HTTP/2.0" 304 -
10.0.0.7 - - [10/Oct/2024:13:58:02 +0000] "GET /missing HTTP/1.1" 404 153"""

pattern = re.compile(
    r'(?P<ip>\S+) \S+ (?P<user>\S+) \[(?P<ts>[^\]]+)\] "(?P<method>\w+) (?P<path>\S+) [^"]+" (?P<status>\d{3}) (?P<size>\d+|-)'
)
statuses = Counter()
bytes_total = 0
for m in pattern.finditer(LOG):
    statuses[m["status"]] += 1
    bytes_total += 0 if m["size"] == "-" else int(m["size"])
    if m["user"] != "-":
        print(f"authenticated: {m['user']} {m['method']} {m['path']} -> {m['status']}")
print("statuses:", sorted(statuses.items()))
print("bytes:", bytes_total)
