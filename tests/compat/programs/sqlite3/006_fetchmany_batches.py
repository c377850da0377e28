import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE logs (id INTEGER PRIMARY KEY, level TEXT, msg TEXT)")
levels = ["INFO", "WARN", "ERROR"]
conn.executemany(
    "INSERT INTO logs (level, msg) VALUES (?, ?)",
    [(levels[i % 3], f"message {i}") for i in range(17)],
)

cur = conn.execute("SELECT id, level, msg FROM logs ORDER BY id")
batch_no = 0
while True:
    batch = cur.fetchmany(5)
    if not batch:
        break
    batch_no += 1
    errors = [r[0] for r in batch if r[1] == "ERROR"]
    print(f"batch {batch_no}: ids {batch[0][0]}-{batch[-1][0]} ({len(batch)} rows), errors at {errors}")
print("arraysize default:", cur.arraysize)
print(conn.execute("SELECT level, COUNT(*) FROM logs GROUP BY level ORDER BY level").fetchall())
conn.close()
