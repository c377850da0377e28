import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE accounts (name TEXT PRIMARY KEY, balance INTEGER CHECK (balance >= 0))")
conn.executemany("INSERT INTO accounts VALUES (?, ?)", [("alice", 100), ("bob", 50)])
conn.commit()

def transfer(src, dst, amount):
    try:
        with conn:
            conn.execute("UPDATE accounts SET balance = balance + ? WHERE name = ?", (amount, dst))
            conn.execute("UPDATE accounts SET balance = balance - ? WHERE name = ?", (amount, src))
        print(f"transfer {src}->{dst} {amount}: ok")
    except sqlite3.IntegrityError as e:
        print(f"transfer {src}->{dst} {amount}: rolled back ({e})")

def balances():
    return dict(conn.execute("SELECT name, balance FROM accounts ORDER BY name"))

transfer("alice", "bob", 30)
print(balances())
transfer("bob", "alice", 500)
print(balances())
transfer("alice", "bob", 70)
print(balances())
conn.close()
