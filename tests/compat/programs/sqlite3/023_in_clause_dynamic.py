import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE tickets (id INTEGER PRIMARY KEY, title TEXT, assignee TEXT, priority INTEGER)")
conn.executemany("INSERT INTO tickets (title, assignee, priority) VALUES (?, ?, ?)", [
    ("Login fails", "sam", 1), ("Typo on homepage", "kit", 4), ("Slow report", "sam", 2),
    ("Export broken", "lee", 1), ("Dark mode", "kit", 5), ("API 500s", "lee", 1),
])

wanted = ["sam", "lee"]
placeholders = ", ".join("?" for _ in wanted)
sql = f"SELECT assignee, title, priority FROM tickets WHERE assignee IN ({placeholders}) AND priority <= ? ORDER BY priority, id"
print(sql)
for assignee, title, prio in conn.execute(sql, (*wanted, 2)):
    print(f"P{prio} {assignee:<4} {title}")
ids = [2, 5]
conn.execute(f"UPDATE tickets SET priority = 3 WHERE id IN ({','.join('?' * len(ids))})", ids)
print(conn.execute("SELECT id, priority FROM tickets WHERE assignee = 'kit'").fetchall())
conn.close()
