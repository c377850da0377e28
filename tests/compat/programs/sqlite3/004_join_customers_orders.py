import sqlite3

conn = sqlite3.connect(":memory:")
conn.executescript("""
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
                     total REAL, placed_on TEXT);
INSERT INTO customers VALUES (1, 'Ada', 'UK'), (2, 'Bjorn', 'SE'), (3, 'Chen', 'CN'), (4, 'Dara', 'IE');
INSERT INTO orders VALUES (10, 1, 99.5, '2024-01-03'), (11, 1, 15.0, '2024-02-11'),
                          (12, 3, 420.0, '2024-02-14'), (13, 2, 64.25, '2024-03-01');
""")

print("Inner join:")
for row in conn.execute("""
    SELECT c.name, o.id, o.total FROM customers c
    JOIN orders o ON o.customer_id = c.id ORDER BY o.id"""):
    print("  ", row)

print("Customers with order stats (LEFT JOIN):")
for name, n, spent in conn.execute("""
    SELECT c.name, COUNT(o.id), COALESCE(SUM(o.total), 0) FROM customers c
    LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.id ORDER BY c.name"""):
    print(f"   {name:<6} orders={n} spent={spent:.2f}")
conn.close()
