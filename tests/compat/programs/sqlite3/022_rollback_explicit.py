import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE ledger (id INTEGER PRIMARY KEY, entry TEXT, amount INTEGER)")
conn.execute("INSERT INTO ledger (entry, amount) VALUES ('opening', 1000)")
conn.commit()

batch = [("rent", -800), ("salary", 2500), ("bad-entry", None), ("food", -120)]
try:
    for entry, amount in batch:
        if amount is None:
            raise ValueError(f"missing amount for {entry!r}")
        conn.execute("INSERT INTO ledger (entry, amount) VALUES (?, ?)", (entry, amount))
    conn.commit()
except ValueError as e:
    print("error:", e)
    print("pending rows before rollback:", conn.execute("SELECT COUNT(*) FROM ledger").fetchone()[0])
    conn.rollback()

print("rows after rollback:", conn.execute("SELECT COUNT(*) FROM ledger").fetchone()[0])
good = [(e, a) for e, a in batch if a is not None]
with conn:
    conn.executemany("INSERT INTO ledger (entry, amount) VALUES (?, ?)", good)
print("balance:", conn.execute("SELECT SUM(amount) FROM ledger").fetchone()[0])
print(conn.execute("SELECT entry FROM ledger ORDER BY id").fetchall())
conn.close()
