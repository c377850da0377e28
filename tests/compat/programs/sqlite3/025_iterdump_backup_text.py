import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
conn.executemany("INSERT INTO notes (body) VALUES (?)", [("first note",), ("it's quoted",), ("third",)])
conn.commit()

dump = list(conn.iterdump())
for line in dump:
    print(line)

copy = sqlite3.connect(":memory:")
copy.executescript("\n".join(dump))
print("copied rows:", copy.execute("SELECT COUNT(*) FROM notes").fetchone()[0])
print(copy.execute("SELECT body FROM notes WHERE id = 2").fetchone()[0])
copy.close()
conn.close()
