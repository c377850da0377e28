import sqlite3

conn = sqlite3.connect(":memory:")
with conn:
    conn.execute("CREATE TABLE carts (id INTEGER PRIMARY KEY, user TEXT, items INTEGER)")
    conn.executemany("INSERT INTO carts (user, items) VALUES (?, ?)", [("ann", 2), ("bo", 0), ("cy", 5)])

try:
    with conn:
        conn.execute("UPDATE carts SET items = items + 1 WHERE user = 'ann'")
        conn.execute("INSERT INTO carts (id, user, items) VALUES (1, 'dup', 1)")
except sqlite3.IntegrityError as e:
    print("batch failed:", type(e).__name__, "-", e)

print(conn.execute("SELECT user, items FROM carts ORDER BY id").fetchall())

with conn:
    deleted = conn.execute("DELETE FROM carts WHERE items = 0").rowcount
print("deleted empty carts:", deleted)
print(conn.execute("SELECT COUNT(*), SUM(items) FROM carts").fetchone())
conn.close()
try:
    conn.execute("SELECT 1")
except sqlite3.ProgrammingError as e:
    print("after close:", type(e).__name__)
