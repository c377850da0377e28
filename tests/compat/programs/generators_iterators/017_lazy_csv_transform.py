import csv
import io

raw = io.StringIO(
    "date,region,units,price\n"
    "2024-01-02,north,10,2.50\n"
    "2024-01-02,south,,3.00\n"
    "2024-01-03,north,7,2.50\n"
    "2024-01-03,east,bad,1.00\n"
    "2024-01-04,south,12,3.00\n"
)

def clean(rows):
    for row in rows:
        try:
            row["units"] = int(row["units"])
        except ValueError:
            print(f"  dropping row {row['date']}/{row['region']}: units={row['units']!r}")
            continue
        row["price"] = float(row["price"])
        yield row

def with_revenue(rows):
    for row in rows:
        yield {**row, "revenue": row["units"] * row["price"]}

totals = {}
for row in with_revenue(clean(csv.DictReader(raw))):
    totals[row["region"]] = totals.get(row["region"], 0) + row["revenue"]
for region, rev in sorted(totals.items()):
    print(f"{region}: {rev:.2f}")
