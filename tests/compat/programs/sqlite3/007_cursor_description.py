import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE metrics (host TEXT, metric TEXT, value REAL, ts TEXT)")
conn.executemany("INSERT INTO metrics VALUES (?, ?, ?, ?)", [
    ("web-1", "cpu", 0.72, "2024-05-01 10:00"),
    ("web-1", "mem", 0.55, "2024-05-01 10:00"),
    ("web-2", "cpu", 0.31, "2024-05-01 10:00"),
])

cur = conn.execute("SELECT host, metric, value * 100 AS pct FROM metrics ORDER BY pct DESC")
columns = [d[0] for d in cur.description]
print("columns:", columns)
print("description entry length:", len(cur.description[0]))
widths = [8, 8, 8]
print("".join(c.upper().ljust(w) for c, w in zip(columns, widths)))
for row in cur:
    print("".join(str(round(v, 1) if isinstance(v, float) else v).ljust(w) for v, w in zip(row, widths)))
conn.close()
