def validate(row):
    errors = []
    if not row.get("email") or "@" not in row["email"]:
        errors.append(ValueError(f"row {row['id']}: invalid email {row.get('email')!r}"))
    if not isinstance(row.get("age"), int):
        errors.append(TypeError(f"row {row['id']}: age must be int"))
    elif row["age"] < 0:
        errors.append(ValueError(f"row {row['id']}: negative age"))
    return errors

rows = [
    {"id": 1, "email": "a@x.test", "age": 30},
    {"id": 2, "email": "nope", "age": "31"},
    {"id": 3, "email": "c@x.test", "age": -4},
]
all_errors = [e for r in rows for e in validate(r)]
try:
    if all_errors:
        raise ExceptionGroup("validation failed", all_errors)
except* ValueError as eg:
    print(f"{len(eg.exceptions)} value errors:")
    for e in eg.exceptions:
        print("  ", e)
except* TypeError as eg:
    print(f"{len(eg.exceptions)} type errors:")
    for e in eg.exceptions:
        print("  ", e)
print("processed", len(rows), "rows")
