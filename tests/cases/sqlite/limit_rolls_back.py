# An execution stopped by a limit leaves the database as it was before that execution.
import sqlite3
db = sqlite3.connect(":memory:", isolation_level=None)
db.execute("create table t (n integer)")
db.execute("insert into t values (1)")
# --- cell ---
# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
db.execute("insert into t values (2)")
db.execute("create table gone (x)")
while True:
    pass
# --- cell ---
print(db.execute("select * from t").fetchall())
print(db.execute("select name from sqlite_master").fetchall())
