import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE samples (i INTEGER, r REAL, t TEXT, b BLOB, n)")
conn.execute("INSERT INTO samples VALUES (?, ?, ?, ?, ?)",
             (2**40, 3.25, "héllo", b"\x00\x01\xff", None))
conn.execute("INSERT INTO samples VALUES (?, ?, ?, ?, ?)", (True, 1, 42, bytearray(b"ab"), 7.5))

for row in conn.execute("SELECT i, r, t, b, n, typeof(i), typeof(r), typeof(t), typeof(b), typeof(n) FROM samples"):
    values, types = row[:5], row[5:]
    print([type(v).__name__ for v in values], types)
    print("  ", values)
print(conn.execute("SELECT length(t), upper(t), hex(b) FROM samples").fetchall())
print(conn.execute("SELECT 7 / 2, 7 / 2.0, 7 % 3, CAST('12abc' AS INTEGER)").fetchone())
conn.close()
