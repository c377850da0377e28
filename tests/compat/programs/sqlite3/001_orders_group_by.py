import sqlite3

orders = [
    {"id": 1, "customer": "acme", "region": "west", "amount": 250.0},
    {"id": 2, "customer": "globex", "region": "east", "amount": 120.5},
    {"id": 3, "customer": "acme", "region": "west", "amount": 75.25},
    {"id": 4, "customer": "initech", "region": "east", "amount": 980.0},
    {"id": 5, "customer": "globex", "region": "east", "amount": 43.0},
    {"id": 6, "customer": "umbrella", "region": "south", "amount": 310.0},
]

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, region TEXT, amount REAL)")
conn.executemany("INSERT INTO orders VALUES (:id, :customer, :region, :amount)", orders)

query = """
    SELECT region, COUNT(*) AS n, SUM(amount) AS total, ROUND(AVG(amount), 2) AS avg_amt
    FROM orders GROUP BY region ORDER BY total DESC
"""
for region, n, total, avg_amt in conn.execute(query):
    print(f"{region:<6} n={n} total={total:>8.2f} avg={avg_amt}")
conn.close()
