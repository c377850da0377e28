import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE tasks (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT, status TEXT DEFAULT 'open')")

ids = []
for title in ["write report", "review PR", "deploy", "update deps"]:
    cur = conn.execute("INSERT INTO tasks (title) VALUES (?)", (title,))
    ids.append(cur.lastrowid)
print("new ids:", ids)

cur = conn.execute("UPDATE tasks SET status = 'done' WHERE id IN (?, ?)", (ids[0], ids[2]))
print("updated rows:", cur.rowcount)
cur = conn.execute("DELETE FROM tasks WHERE status = 'open' AND title LIKE 'update%'")
print("deleted rows:", cur.rowcount)
cur = conn.execute("UPDATE tasks SET status = 'x' WHERE id = 999")
print("no-match update rowcount:", cur.rowcount)
cur = conn.execute("INSERT INTO tasks (title) VALUES ('new after delete')")
print("next id:", cur.lastrowid)
print(conn.execute("SELECT status, COUNT(*) FROM tasks GROUP BY status ORDER BY status").fetchall())
conn.close()
