import json
from datetime import date

raw = '''[
  {"name": "kickoff", "when": "2024-02-01", "attendees": 5},
  {"name": "review", "when": "2024-03-15", "attendees": 12},
  {"name": "launch", "when": "2024-04-30", "attendees": 40}
]'''

def hook(d):
    if "when" in d:
        d["when"] = date.fromisoformat(d["when"])
    return d

events = json.loads(raw, object_hook=hook)
for e in events:
    print(f"{e['name']:8} {e['when']:%a %d %b} {e['attendees']:3d}")
span = events[-1]["when"] - events[0]["when"]
print("span days:", span.days)
