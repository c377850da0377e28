import json

rows = json.loads(await fetch_rows({}))
paid = {}
for row in rows:
    if row["status"] == "paid":
        paid[row["region"]] = paid.get(row["region"], 0) + row["cents"]
print(len(rows), sorted(paid.items()))
