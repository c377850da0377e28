import sqlite3

SCHEMA = """
CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT UNIQUE);
CREATE TABLE employees (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    dept_id INTEGER REFERENCES departments(id),
    salary INTEGER
);
CREATE INDEX idx_emp_dept ON employees(dept_id);
INSERT INTO departments (name) VALUES ('Engineering'), ('Sales'), ('Support');
INSERT INTO employees (name, dept_id, salary) VALUES
    ('Ivy', 1, 135000), ('Jon', 1, 118000), ('Kim', 2, 90000),
    ('Lou', 2, 97000), ('Max', 3, 64000);
"""

conn = sqlite3.connect(":memory:")
conn.executescript(SCHEMA)
tables = conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table','index') ORDER BY name").fetchall()
print("objects:", [t[0] for t in tables])
for dept, headcount, top in conn.execute("""
    SELECT d.name, COUNT(e.id), MAX(e.salary) FROM departments d
    JOIN employees e ON e.dept_id = d.id GROUP BY d.id ORDER BY d.name"""):
    print(f"{dept:<12} headcount={headcount} top_salary={top:,}")
conn.close()
