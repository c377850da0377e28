import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE profiles (name TEXT, phone TEXT, age INTEGER, city TEXT)")
rows = [
    {"name": "Ann", "phone": "555-0100", "age": 31, "city": "Austin"},
    {"name": "Bob", "phone": None, "age": None, "city": "Boston"},
    {"name": "Cal", "phone": None, "age": 45, "city": None},
    {"name": "Dot", "phone": "555-0199", "age": 28, "city": "Austin"},
]
conn.executemany("INSERT INTO profiles VALUES (:name, :phone, :age, :city)", rows)

print(conn.execute("SELECT COUNT(*), COUNT(phone), COUNT(age), AVG(age) FROM profiles").fetchone())
print(conn.execute("SELECT name FROM profiles WHERE phone IS NULL ORDER BY name").fetchall())
for name, city in conn.execute("SELECT name, IFNULL(city, 'unknown') FROM profiles ORDER BY name"):
    print(f"{name}: {city}")
print(conn.execute("SELECT city, COUNT(*) FROM profiles GROUP BY city ORDER BY city").fetchall())
print(conn.execute("SELECT NULL = NULL, NULL IS NULL, COALESCE(NULL, NULL, 'x')").fetchone())
conn.close()
