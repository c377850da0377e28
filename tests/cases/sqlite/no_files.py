# The sandbox has no files: only in-memory databases open.
import sqlite3
for target in ["orders.db", "/etc/passwd", "file:x.db?mode=ro"]:
    try:
        sqlite3.connect(target, uri=target.startswith("file:")).execute("select 1")
        print(target, "opened")
    except sqlite3.OperationalError as e:
        print(target, "OperationalError", e)
db = sqlite3.connect("file:shared?mode=memory", uri=True)
print(db.execute("select 1").fetchone())
try:
    db.execute("attach database 'other.db' as other")
except sqlite3.OperationalError as e:
    print("attach", e)
