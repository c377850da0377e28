import sqlite3
from collections import namedtuple

def namedtuple_factory(cursor, row):
    fields = [col[0] for col in cursor.description]
    Row = namedtuple("Row", fields)
    return Row(*row)

conn = sqlite3.connect(":memory:")
conn.row_factory = namedtuple_factory
conn.execute("CREATE TABLE flights (code TEXT, origin TEXT, dest TEXT, minutes INTEGER, delayed INTEGER)")
conn.executemany("INSERT INTO flights VALUES (?, ?, ?, ?, ?)", [
    ("BA117", "LHR", "JFK", 470, 0), ("AF22", "CDG", "JFK", 500, 1),
    ("LH400", "FRA", "JFK", 535, 1), ("KL641", "AMS", "JFK", 505, 0),
])
for f in conn.execute("SELECT code, origin, minutes FROM flights WHERE delayed = 1 ORDER BY minutes"):
    print(f"{f.code} from {f.origin}: {f.minutes // 60}h{f.minutes % 60:02d}m")
stats = conn.execute("SELECT COUNT(*) AS n, MIN(minutes) AS shortest, MAX(minutes) AS longest FROM flights").fetchone()
print(stats)
print(stats._asdict())
conn.close()
