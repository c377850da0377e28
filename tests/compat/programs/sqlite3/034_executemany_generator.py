import sqlite3

def sensor_readings(n):
    for i in range(n):
        yield (f"sensor-{i % 4}", i * 15, round(20 + (i * 7 % 11) * 0.5, 1))

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE readings (sensor TEXT, t INTEGER, temp REAL)")
conn.executemany("INSERT INTO readings VALUES (?, ?, ?)", sensor_readings(40))
conn.commit()

print("rows:", conn.execute("SELECT COUNT(*) FROM readings").fetchone()[0])
for sensor, lo, hi, avg in conn.execute("""
    SELECT sensor, MIN(temp), MAX(temp), ROUND(AVG(temp), 2) FROM readings
    GROUP BY sensor ORDER BY sensor"""):
    print(f"{sensor}: min={lo} max={hi} avg={avg}")
hot = conn.execute("SELECT sensor, t FROM readings WHERE temp >= ? ORDER BY t LIMIT 3", (24.5,)).fetchall()
print("first hot readings:", hot)
conn.close()
