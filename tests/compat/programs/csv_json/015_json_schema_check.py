import json

records = json.loads("""[
 {"id": 1, "email": "a@x.io", "age": 30},
 {"id": "2", "email": "b@x.io", "age": 41},
 {"id": 3, "age": -5},
 {"id": 4, "email": "d@x.io", "age": 22, "extra": true}
]""")
schema = {"id": int, "email": str, "age": int}

for rec in records:
    problems = []
    for field, typ in schema.items():
        if field not in rec:
            problems.append(f"missing {field}")
        elif not isinstance(rec[field], typ):
            problems.append(f"{field} should be {typ.__name__}")
    if isinstance(rec.get("age"), int) and rec["age"] < 0:
        problems.append("age negative")
    extra = sorted(set(rec) - set(schema))
    if extra:
        problems.append(f"unexpected {extra}")
    print(rec.get("id"), "OK" if not problems else "; ".join(problems))
