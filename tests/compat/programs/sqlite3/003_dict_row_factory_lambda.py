import sqlite3

conn = sqlite3.connect(":memory:")
conn.row_factory = lambda cur, row: {col[0]: row[i] for i, col in enumerate(cur.description)}
conn.execute("CREATE TABLE products (sku TEXT PRIMARY KEY, name TEXT, price REAL, stock INTEGER)")
conn.executemany(
    "INSERT INTO products VALUES (?, ?, ?, ?)",
    [("P-1", "Keyboard", 49.99, 12), ("P-2", "Mouse", 19.5, 0), ("P-3", "Monitor", 219.0, 4)],
)

in_stock = conn.execute("SELECT sku, name, price FROM products WHERE stock > 0 ORDER BY price").fetchall()
print(in_stock)
value = conn.execute("SELECT SUM(price * stock) AS inventory_value FROM products").fetchone()
print(value)
print(f"Inventory value: ${value['inventory_value']:,.2f}")
conn.close()
