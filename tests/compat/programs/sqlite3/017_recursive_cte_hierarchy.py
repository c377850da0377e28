import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE staff (id INTEGER PRIMARY KEY, name TEXT, manager_id INTEGER)")
conn.executemany("INSERT INTO staff VALUES (?, ?, ?)", [
    (1, "CEO Grace", None), (2, "CTO Alan", 1), (3, "CFO Ada", 1),
    (4, "Eng Lead Linus", 2), (5, "Dev Guido", 4), (6, "Dev Bjarne", 4), (7, "Accountant Luca", 3),
])

rows = conn.execute("""
WITH RECURSIVE chain(id, name, depth, path) AS (
    SELECT id, name, 0, name FROM staff WHERE manager_id IS NULL
    UNION ALL
    SELECT s.id, s.name, c.depth + 1, c.path || ' > ' || s.name
    FROM staff s JOIN chain c ON s.manager_id = c.id
)
SELECT name, depth, path FROM chain ORDER BY path
""").fetchall()
for name, depth, path in rows:
    print("  " * depth + name)
print("deepest:", max(rows, key=lambda r: (r[1], r[0]))[2])
print(conn.execute("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT group_concat(x) FROM n").fetchone()[0])
conn.close()
