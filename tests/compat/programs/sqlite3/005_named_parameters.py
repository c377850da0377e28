import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT, severity INTEGER, host TEXT)")
events = [
    {"kind": "disk", "severity": 3, "host": "web-1"},
    {"kind": "cpu", "severity": 5, "host": "web-2"},
    {"kind": "disk", "severity": 1, "host": "db-1"},
    {"kind": "net", "severity": 4, "host": "web-1"},
    {"kind": "cpu", "severity": 2, "host": "db-1"},
]
conn.executemany("INSERT INTO events (kind, severity, host) VALUES (:kind, :severity, :host)", events)

params = {"min_sev": 3, "prefix": "web-%"}
rows = conn.execute(
    "SELECT id, kind, severity, host FROM events "
    "WHERE severity >= :min_sev AND host LIKE :prefix ORDER BY severity DESC",
    params,
).fetchall()
for r in rows:
    print(r)
count = conn.execute("SELECT COUNT(*) FROM events WHERE kind = :k", {"k": "disk"}).fetchone()[0]
print("disk events:", count)
conn.close()
