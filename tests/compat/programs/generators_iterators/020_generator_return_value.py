def validate(rows):
    bad = 0
    for row in rows:
        if "@" not in row.get("email", ""):
            bad += 1
            continue
        yield row
    return bad

def pipeline(rows):
    bad = yield from validate(rows)
    print(f"(validator rejected {bad} rows)")

signups = [
    {"name": "Ann", "email": "ann@x.test"},
    {"name": "Bo", "email": "bo-at-x.test"},
    {"name": "Cid"},
    {"name": "Di", "email": "di@y.test"},
]
good = list(pipeline(signups))
print([r["name"] for r in good])

gen = validate(signups)
try:
    while True:
        next(gen)
except StopIteration as stop:
    print("return value via StopIteration:", stop.value)
