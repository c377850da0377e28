from datetime import date, datetime

rows = [("2024", "2", "29"), ("2023", "2", "29"), ("2024", "13", "1"),
        ("2024", "4", "31"), ("2024", "12", "31")]
ok = []
for y, m, d in rows:
    try:
        ok.append(date(int(y), int(m), int(d)))
    except ValueError as e:
        print(f"{y}-{m}-{d}: error: {e}")
print("valid:", [x.isoformat() for x in ok])

try:
    datetime.strptime("2024-06-01 25:00", "%Y-%m-%d %H:%M")
except ValueError as e:
    print("strptime error:", e)
