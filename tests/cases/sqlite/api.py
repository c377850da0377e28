# sluice: cpython = true
# The DB-API as CPython's sqlite3 module has it: rows, factories, transactions, functions.
import sqlite3

db = sqlite3.connect(":memory:")
cur = db.cursor()
cur.execute("create table users (id integer primary key, name text unique not null, score real, data blob)")
cur.executemany("insert into users (name, score, data) values (:name, :score, :data)",
                [{"name": n, "score": s, "data": bytes([s % 256])} for n, s in [("ann", 3), ("bob", 9), ("cy", 5)]])
print(cur.rowcount, cur.lastrowid, db.total_changes, db.in_transaction)
with db:
    cur.execute("update users set score = score * 2 where score > ?", (4,))
    print("updated", cur.rowcount)
print(db.in_transaction)
try:
    with db:
        db.execute("insert into users (name) values ('dan')")
        db.execute("insert into users (name) values ('ann')")
except sqlite3.IntegrityError as e:
    print(type(e).__name__, e, e.sqlite_errorcode, e.sqlite_errorname)
print(db.execute("select count(*) from users").fetchone())
cur.execute("select id, name, score, data from users order by id")
print([d[0] for d in cur.description])
print(cur.fetchone(), cur.fetchmany(1), cur.fetchall(), cur.fetchone())
db.row_factory = sqlite3.Row
row = db.execute("select name, score from users where name = ?", ["bob"]).fetchone()
print(row.keys(), row["NAME"], row[1], tuple(row), len(row))
db.row_factory = lambda c, r: {d[0]: v for d, v in zip(c.description, r)}
print(db.execute("select name from users where score between 5 and 10").fetchall())
db.row_factory = None

class Median:
    def __init__(self):
        self.values = []
    def step(self, value):
        self.values.append(value)
    def finalize(self):
        v = sorted(self.values)
        return v[len(v) // 2]

db.create_function("initial", 1, lambda s: s[:1].upper(), deterministic=True)
db.create_aggregate("median", 1, Median)
db.create_collation("reverse", lambda a, b: (a < b) - (a > b))
print(db.execute("select initial(name), median(score) from users").fetchall())
print(db.execute("select name from users order by name collate reverse").fetchall())
print(db.execute("select name, sum(score) over (order by id) from users").fetchall())
print(db.execute("with recursive n(i) as (select 1 union all select i + 1 from n where i < 5) select sum(i) from n").fetchone())
print(db.execute("select json_extract('{\"a\": [1, 2]}', '$.a[1]'), typeof(1.5), upper('x')").fetchone())
try:
    db.execute("select 1; select 2")
except sqlite3.ProgrammingError as e:
    print("ProgrammingError", e)
try:
    db.execute("select * from missing")
except sqlite3.OperationalError as e:
    print("OperationalError", e)
try:
    db.execute("select ?", (1, 2))
except sqlite3.ProgrammingError as e:
    print("ProgrammingError", e)
print(sqlite3.complete_statement("select 1;"), sqlite3.complete_statement("select 1"))
print("\n".join(list(db.iterdump())[:3]))
other = sqlite3.connect(":memory:")
db.backup(other)
print(other.execute("select count(*) from users").fetchone())
db.close()
try:
    db.execute("select 1")
except sqlite3.ProgrammingError as e:
    print("ProgrammingError", e)
