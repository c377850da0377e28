from datetime import date

users = [
    {"name": "Ana", "born": "1990-02-28"},
    {"name": "Ben", "born": "2000-02-29"},
    {"name": "Cy", "born": "1985-12-31"},
    {"name": "Di", "born": "2006-06-15"},
]
ref = date(2024, 6, 14)

def age_on(born, ref):
    years = ref.year - born.year
    if (ref.month, ref.day) < (born.month, born.day):
        years -= 1
    return years

for u in users:
    b = date.fromisoformat(u["born"])
    a = age_on(b, ref)
    status = "adult" if a >= 18 else "minor"
    print(f"{u['name']:4} born {b:%d %b %Y} age {a:2d} ({status})")
