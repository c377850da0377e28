import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT UNIQUE NOT NULL, name TEXT)")

signups = [
    ("ana@example.com", "Ana"),
    ("ben@example.com", "Ben"),
    ("ana@example.com", "Ana Duplicate"),
    (None, "No Email"),
    ("cy@example.com", "Cy"),
]
inserted, rejected = 0, []
for email, name in signups:
    try:
        conn.execute("INSERT INTO users (email, name) VALUES (?, ?)", (email, name))
        inserted += 1
    except sqlite3.IntegrityError as e:
        rejected.append((name, str(e)))
conn.commit()
print("inserted:", inserted)
for name, reason in rejected:
    print(f"rejected {name!r}: {reason}")
print(conn.execute("SELECT id, email FROM users ORDER BY id").fetchall())
print(issubclass(sqlite3.IntegrityError, sqlite3.DatabaseError))
conn.close()
