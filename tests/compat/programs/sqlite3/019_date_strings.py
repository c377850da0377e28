import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE subscriptions (user TEXT, started TEXT, plan_days INTEGER)")
conn.executemany("INSERT INTO subscriptions VALUES (?, ?, ?)", [
    ("ana", "2024-01-15", 30), ("ben", "2024-02-28", 365), ("cid", "2023-12-31", 90), ("dee", "2024-02-29", 7),
])

rows = conn.execute("""
SELECT user, started,
       date(started, '+' || plan_days || ' days') AS expires,
       strftime('%w', started) AS weekday,
       julianday('2024-03-31') - julianday(started) AS age_days
FROM subscriptions ORDER BY started
""").fetchall()
days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
for user, started, expires, wd, age in rows:
    status = "expired" if expires < "2024-03-31" else "active"
    print(f"{user}: {started} ({days[int(wd)]}) -> {expires} [{status}] age={age:.0f}d")
print(conn.execute("SELECT date('2024-01-31', '+1 month'), date('2024-03-31', 'start of month', '-1 day')").fetchone())
conn.close()
