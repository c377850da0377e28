import csv
import io

text = """date,temp_c,humidity
2024-07-01,21.5,60
2024-07-02,24.0,55
2024-07-03,,70
2024-07-04,29.25,40
2024-07-05,26.75,n/a
"""
cols = {"temp_c": [], "humidity": []}
for row in csv.DictReader(io.StringIO(text)):
    for c in cols:
        try:
            cols[c].append(float(row[c]))
        except ValueError:
            pass

for c, vals in cols.items():
    print(f"{c:9} n={len(vals)} min={min(vals):.2f} max={max(vals):.2f} mean={sum(vals) / len(vals):.2f}")
