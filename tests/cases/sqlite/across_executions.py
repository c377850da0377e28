# A database opened in one execution is there, with its rows, in the next.
import sqlite3
db = sqlite3.connect(":memory:")
db.execute("create table orders (id integer primary key, customer text, total real)")
db.executemany("insert into orders (customer, total) values (?, ?)", [("ann", 12.5), ("bob", 3.0), ("ann", 7.25)])
db.commit()
# --- cell ---
rows = db.execute("select customer, count(*), sum(total) from orders group by customer order by customer").fetchall()
print(rows)
db.execute("insert into orders (customer, total) values ('cy', 1)")
# --- cell ---
print(db.in_transaction, db.execute("select count(*) from orders").fetchone()[0])
db.rollback()
print(db.execute("select count(*) from orders").fetchone()[0])
