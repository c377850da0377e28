import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT, views INTEGER)")
conn.executemany(
    "INSERT INTO articles (title, views) VALUES (?, ?)",
    [(f"Article {i:02d}", (i * 137) % 1000) for i in range(1, 24)],
)

def page(n, size=5):
    return conn.execute(
        "SELECT id, title, views FROM articles ORDER BY views DESC, id LIMIT ? OFFSET ?",
        (size, (n - 1) * size),
    ).fetchall()

total = conn.execute("SELECT COUNT(*) FROM articles").fetchone()[0]
pages = -(-total // 5)
print(f"{total} articles, {pages} pages")
for n in (1, 2, pages):
    rows = page(n)
    print(f"page {n}:", [(r[0], r[2]) for r in rows])
print("page beyond end:", page(pages + 1))
conn.close()
