import sqlite3

conn = sqlite3.connect(":memory:")
conn.executescript("""
CREATE TABLE employees (name TEXT, dept TEXT, salary INTEGER);
INSERT INTO employees VALUES
  ('Ava', 'eng', 150), ('Ben', 'eng', 120), ('Cai', 'eng', 95),
  ('Dia', 'ops', 80), ('Eli', 'ops', 105), ('Fei', 'sales', 70), ('Gil', 'sales', 130);
""")

above_avg = conn.execute("""
    SELECT e.name, e.dept, e.salary,
           (SELECT ROUND(AVG(salary), 1) FROM employees WHERE dept = e.dept) AS dept_avg
    FROM employees e
    WHERE e.salary > (SELECT AVG(salary) FROM employees WHERE dept = e.dept)
    ORDER BY e.dept, e.salary DESC
""").fetchall()
for row in above_avg:
    print("above dept avg:", row)

print(conn.execute("""SELECT dept FROM employees GROUP BY dept
                      HAVING MAX(salary) > (SELECT AVG(salary) FROM employees) ORDER BY dept""").fetchall())
print(conn.execute("SELECT name FROM employees WHERE dept IN (SELECT dept FROM employees WHERE salary < 75)").fetchall())
conn.close()
