import csv
import io
import sqlite3

CSV_TEXT = """order_id,product,qty,unit_price
1001,widget,3,4.50
1002,gadget,1,19.99
1003,widget,10,4.25
1004,gizmo,2,7.00
1005,gadget,4,18.50
"""

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE lines (order_id INTEGER, product TEXT, qty INTEGER, unit_price REAL)")
reader = csv.DictReader(io.StringIO(CSV_TEXT))
cur = conn.executemany("INSERT INTO lines VALUES (:order_id, :product, :qty, :unit_price)", reader)
print("loaded rows:", cur.rowcount)

print(conn.execute("SELECT typeof(order_id), typeof(qty), typeof(unit_price) FROM lines LIMIT 1").fetchone())
for product, units, revenue in conn.execute("""
    SELECT product, SUM(qty), ROUND(SUM(qty * unit_price), 2) FROM lines
    GROUP BY product ORDER BY 3 DESC"""):
    print(f"{product:<7} units={units:>3} revenue={revenue:>7.2f}")
conn.close()
