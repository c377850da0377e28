from dataclasses import dataclass

@dataclass
class FieldError:
    row: int
    field: str
    message: str

def validate(rows):
    errors = []
    for i, row in enumerate(rows, start=1):
        if not row.get("name", "").strip():
            errors.append(FieldError(i, "name", "required"))
        try:
            age = int(row.get("age", ""))
            if not 0 <= age <= 130:
                errors.append(FieldError(i, "age", f"out of range: {age}"))
        except ValueError as e:
            errors.append(FieldError(i, "age", f"not an integer ({e})"))
        if row.get("email") and "@" not in row["email"]:
            errors.append(FieldError(i, "email", "missing @"))
    return errors

rows = [
    {"name": "Ann", "age": "34", "email": "ann@x.test"},
    {"name": " ", "age": "abc", "email": "bob"},
    {"name": "Cy", "age": "150"},
    {"name": "Di", "age": "29", "email": "di@x.test"},
]
errs = validate(rows)
print(f"{len(errs)} problems in {len({e.row for e in errs})} of {len(rows)} rows")
for e in errs:
    print(f"  row {e.row} [{e.field}] {e.message}")
