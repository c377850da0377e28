import sqlite3
import statistics

class Median:
    def __init__(self):
        self.values = []

    def step(self, value):
        if value is not None:
            self.values.append(value)

    def finalize(self):
        return statistics.median(self.values) if self.values else None

class CsvConcat:
    def __init__(self):
        self.items = []

    def step(self, value):
        self.items.append(str(value))

    def finalize(self):
        return ",".join(sorted(self.items))

conn = sqlite3.connect(":memory:")
conn.create_aggregate("median", 1, Median)
conn.create_aggregate("csv_concat", 1, CsvConcat)
conn.execute("CREATE TABLE latency (endpoint TEXT, ms INTEGER)")
data = [("/api", 120), ("/api", 80), ("/api", 300), ("/login", 45), ("/login", 55), ("/api", 95)]
conn.executemany("INSERT INTO latency VALUES (?, ?)", data)
for row in conn.execute("""SELECT endpoint, median(ms), AVG(ms), csv_concat(ms)
                           FROM latency GROUP BY endpoint ORDER BY endpoint"""):
    print(row)
conn.close()
