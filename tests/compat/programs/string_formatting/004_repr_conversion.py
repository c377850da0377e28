records = [
    {"name": "alice", "email": "alice@example.com", "note": "likes 'quotes'"},
    {"name": "bob", "email": None, "note": "tab\there"},
    {"name": "carol", "email": "c@example.org", "note": ""},
]

for r in records:
    print(f"name={r['name']!r} email={r['email']!r} note={r['note']!r}")

missing = [r["name"] for r in records if not r["email"]]
print(f"Missing emails: {missing!r}")
print(f"As str: {missing!s}")
print("Empty notes: {!r}".format([r["name"] for r in records if not r["note"]]))
