import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE reviews (product TEXT, stars INTEGER, verified INTEGER)")
reviews = [
    ("lamp", 5, 1), ("lamp", 4, 1), ("lamp", 2, 0), ("desk", 1, 1), ("desk", 2, 1),
    ("chair", 5, 1), ("chair", 5, 0), ("chair", 4, 1), ("chair", 3, 1), ("rug", 4, 0),
]
conn.executemany("INSERT INTO reviews VALUES (?, ?, ?)", reviews)

query = """
SELECT product,
       COUNT(*) AS n,
       ROUND(AVG(stars), 2) AS avg_stars,
       SUM(CASE WHEN verified THEN 1 ELSE 0 END) AS verified_n,
       CASE WHEN AVG(stars) >= 4 THEN 'good' WHEN AVG(stars) >= 3 THEN 'ok' ELSE 'poor' END AS label
FROM reviews
GROUP BY product
HAVING COUNT(*) >= 2
ORDER BY avg_stars DESC, product
"""
for row in conn.execute(query):
    print(row)
conn.close()
