import csv
import io
import json

text = """region,product,units
north,widget,10
south,widget,4
north,gadget,7
east,widget,2
south,gadget,9
north,widget,3
"""
grouped = {}
for row in csv.DictReader(io.StringIO(text)):
    region = grouped.setdefault(row["region"], {})
    region[row["product"]] = region.get(row["product"], 0) + int(row["units"])

print(json.dumps(grouped, indent=2, sort_keys=True))
top = max(grouped, key=lambda r: sum(grouped[r].values()))
print("top region:", top)
