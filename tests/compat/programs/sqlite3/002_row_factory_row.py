import sqlite3

conn = sqlite3.connect(":memory:")
conn.row_factory = sqlite3.Row
conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, email TEXT, active INTEGER)")
users = [("Ana", "ana@x.test", 1), ("Ben", "ben@x.test", 0), ("Cleo", "cleo@y.test", 1)]
conn.executemany("INSERT INTO users (name, email, active) VALUES (?, ?, ?)", users)

rows = conn.execute("SELECT * FROM users WHERE active = ? ORDER BY name", (1,)).fetchall()
for row in rows:
    print(row["id"], row["name"], row["email"], "| keys:", row.keys())
first = rows[0]
print(dict(first))
print(first[1], first["NAME"], len(first), tuple(first))
conn.close()
