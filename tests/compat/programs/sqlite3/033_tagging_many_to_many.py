import sqlite3

posts = {1: "Intro to SQL", 2: "Async Python", 3: "Window Functions", 4: "Generators"}
tags = {1: ["sql", "beginner"], 2: ["python", "async"], 3: ["sql", "advanced"], 4: ["python", "beginner"]}

conn = sqlite3.connect(":memory:")
conn.executescript("""
CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT);
CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT UNIQUE);
CREATE TABLE post_tags (post_id INTEGER, tag_id INTEGER, PRIMARY KEY (post_id, tag_id));
""")
conn.executemany("INSERT INTO posts VALUES (?, ?)", posts.items())
for pid, names in tags.items():
    for name in names:
        conn.execute("INSERT OR IGNORE INTO tags (name) VALUES (?)", (name,))
        tag_id = conn.execute("SELECT id FROM tags WHERE name = ?", (name,)).fetchone()[0]
        conn.execute("INSERT INTO post_tags VALUES (?, ?)", (pid, tag_id))

for name, n, titles in conn.execute("""
    SELECT t.name, COUNT(*), GROUP_CONCAT(p.title, ' | ')
    FROM tags t JOIN post_tags pt ON pt.tag_id = t.id JOIN posts p ON p.id = pt.post_id
    GROUP BY t.id ORDER BY COUNT(*) DESC, t.name"""):
    print(f"{name:<9} {n}  {titles if n == 1 else '(multiple)'}")
print(conn.execute("SELECT COUNT(*) FROM tags").fetchone()[0], "distinct tags")
conn.close()
