import sqlite3

payments = [
    ("2024-01-05", 120.0), ("2024-01-12", 80.0), ("2024-01-20", 45.5),
    ("2024-02-02", 300.0), ("2024-02-15", 12.25), ("2024-03-01", 99.99),
]
conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE payments (paid_on TEXT, amount REAL)")
conn.executemany("INSERT INTO payments VALUES (?, ?)", payments)

rows = conn.execute("""
SELECT paid_on, amount,
       SUM(amount) OVER (ORDER BY paid_on) AS running,
       SUM(amount) OVER (PARTITION BY substr(paid_on, 1, 7) ORDER BY paid_on) AS month_running,
       AVG(amount) OVER (ORDER BY paid_on ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS moving_avg
FROM payments ORDER BY paid_on
""").fetchall()
print(f"{'date':<11}{'amount':>9}{'running':>10}{'month':>9}{'mov_avg':>9}")
for d, amt, run, mrun, mavg in rows:
    print(f"{d:<11}{amt:>9.2f}{run:>10.2f}{mrun:>9.2f}{mavg:>9.2f}")
conn.close()
