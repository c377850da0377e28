import json

columnar = {"name": ["ant", "bee", "cat"], "legs": [6, 6, 4], "flies": [False, True, False]}
rows = [dict(zip(columnar, vals)) for vals in zip(*columnar.values())]
print(json.dumps(rows))

by_legs = {}
for r in rows:
    by_legs.setdefault(str(r["legs"]), []).append(r["name"])
print(json.dumps(by_legs, sort_keys=True))

back = {k: [r[k] for r in rows] for k in rows[0]}
print("columnar roundtrip ok:", back == columnar)
