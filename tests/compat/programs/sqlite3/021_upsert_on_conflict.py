import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE page_views (path TEXT PRIMARY KEY, views INTEGER NOT NULL, last_seen TEXT)")

hits = [
    ("/", "2024-05-01"), ("/pricing", "2024-05-01"), ("/", "2024-05-02"),
    ("/docs", "2024-05-02"), ("/", "2024-05-03"), ("/pricing", "2024-05-03"),
]
for path, day in hits:
    conn.execute("""
        INSERT INTO page_views (path, views, last_seen) VALUES (?, 1, ?)
        ON CONFLICT(path) DO UPDATE SET views = views + 1, last_seen = excluded.last_seen
    """, (path, day))

for row in conn.execute("SELECT * FROM page_views ORDER BY views DESC, path"):
    print(row)
conn.execute("INSERT OR IGNORE INTO page_views VALUES ('/', 999, 'never')")
conn.execute("INSERT OR REPLACE INTO page_views VALUES ('/docs', 50, '2024-06-01')")
print(conn.execute("SELECT path, views FROM page_views ORDER BY path").fetchall())
conn.close()
