# SQLite's memory is the container's: a database too big for memory_bytes fails as memory does.
# sluice: limits = {"memory_bytes": 67108864}
import sqlite3
db = sqlite3.connect(":memory:")
db.execute("create table blobs (b blob)")
try:
    for _ in range(1000):
        db.execute("insert into blobs values (?)", (bytes(1 << 20),))
    print("not stopped")
except MemoryError:
    print("MemoryError")
except sqlite3.Error as e:
    print(type(e).__name__, e)
db.close()
# --- cell ---
import sqlite3
print(sqlite3.connect(":memory:").execute("select 40 + 2").fetchone())
