from collections import defaultdict

def tree():
    return defaultdict(tree)

events = [("2024", "01", "login"), ("2024", "01", "logout"), ("2024", "02", "login"),
          ("2023", "12", "login"), ("2024", "01", "login")]
stats = tree()
for year, month, kind in events:
    node = stats[year][month]
    node[kind] = node[kind] + 1 if kind in node else 1

def to_dict(d):
    return {k: to_dict(v) if isinstance(v, defaultdict) else v for k, v in sorted(d.items())}

import json
print(json.dumps(to_dict(stats), indent=1))
