import sqlite3

sales = [
    ("north", "Ann", 1200), ("north", "Bob", 950), ("north", "Cat", 1800),
    ("south", "Dan", 700), ("south", "Eve", 1500), ("south", "Fay", 1500),
    ("west", "Gus", 400),
]
conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE sales (region TEXT, rep TEXT, amount INTEGER)")
conn.executemany("INSERT INTO sales VALUES (?, ?, ?)", sales)

query = """
SELECT region, rep, amount,
       ROW_NUMBER() OVER (PARTITION BY region ORDER BY amount DESC, rep) AS rn,
       RANK() OVER (PARTITION BY region ORDER BY amount DESC) AS rnk
FROM sales ORDER BY region, rn
"""
for region, rep, amount, rn, rnk in conn.execute(query):
    print(f"{region:<6} #{rn} (rank {rnk}) {rep:<4} {amount:>5}")

top = conn.execute(f"SELECT region, rep FROM ({query}) WHERE rn = 1 ORDER BY region").fetchall()
print("top per region:", top)
conn.close()
