import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE sales (quarter TEXT, product TEXT, revenue INTEGER)")
data = [
    ("Q1", "basic", 100), ("Q1", "pro", 250), ("Q1", "team", 80),
    ("Q2", "basic", 120), ("Q2", "pro", 260), ("Q2", "team", 140),
    ("Q3", "basic", 90), ("Q3", "pro", 310), ("Q4", "team", 200),
]
conn.executemany("INSERT INTO sales VALUES (?, ?, ?)", data)

products = [r[0] for r in conn.execute("SELECT DISTINCT product FROM sales ORDER BY product")]
cols = ", ".join(f"SUM(CASE WHEN product = '{p}' THEN revenue ELSE 0 END) AS {p}" for p in products)
cur = conn.execute(f"SELECT quarter, {cols}, SUM(revenue) AS total FROM sales GROUP BY quarter ORDER BY quarter")
headers = [d[0] for d in cur.description]
print(" ".join(h.rjust(7) for h in headers))
for row in cur:
    print(" ".join(str(v).rjust(7) for v in row))
totals = conn.execute(f"SELECT 'ALL', {cols}, SUM(revenue) FROM sales").fetchone()
print(" ".join(str(v).rjust(7) for v in totals))
conn.close()
