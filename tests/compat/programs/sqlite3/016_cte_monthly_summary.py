import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, placed_on TEXT, amount REAL, status TEXT)")
rows = [
    ("2024-01-04", 50.0, "paid"), ("2024-01-19", 75.5, "paid"), ("2024-01-30", 20.0, "refunded"),
    ("2024-02-02", 200.0, "paid"), ("2024-02-28", 35.0, "paid"), ("2024-03-03", 410.0, "paid"),
    ("2024-03-15", 60.0, "refunded"),
]
conn.executemany("INSERT INTO orders (placed_on, amount, status) VALUES (?, ?, ?)", rows)

query = """
WITH monthly AS (
    SELECT strftime('%Y-%m', placed_on) AS month,
           SUM(CASE WHEN status = 'paid' THEN amount ELSE 0 END) AS revenue,
           SUM(status = 'refunded') AS refunds
    FROM orders GROUP BY month
)
SELECT month, revenue, refunds,
       revenue - LAG(revenue) OVER (ORDER BY month) AS change
FROM monthly ORDER BY month
"""
for month, revenue, refunds, change in conn.execute(query):
    delta = "n/a" if change is None else f"{change:+.2f}"
    print(f"{month}: revenue={revenue:.2f} refunds={refunds} change={delta}")
conn.close()
