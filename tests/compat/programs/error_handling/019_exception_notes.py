def parse_rows(rows):
    out = []
    for i, row in enumerate(rows):
        try:
            out.append({"sku": row[0], "qty": int(row[1])})
        except (ValueError, IndexError) as e:
            e.add_note(f"while parsing row {i}: {row!r}")
            raise
    return out

batches = {
    "good": [("A", "1"), ("B", "2")],
    "bad-qty": [("A", "1"), ("B", "two")],
    "short": [("C",)],
}
for name, rows in batches.items():
    try:
        print(name, parse_rows(rows))
    except Exception as e:
        print(f"{name}: {type(e).__name__}: {e}")
        for note in getattr(e, "__notes__", []):
            print("   note:", note)
