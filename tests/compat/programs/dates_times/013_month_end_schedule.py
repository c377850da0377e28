import calendar
from datetime import date

def add_months(d, n):
    m = d.month - 1 + n
    y = d.year + m // 12
    m = m % 12 + 1
    last = calendar.monthrange(y, m)[1]
    return date(y, m, min(d.day, last))

start = date(2024, 1, 31)
schedule = [add_months(start, i) for i in range(8)]
for i, d in enumerate(schedule):
    print(f"payment {i + 1}: {d.isoformat()} ({d.strftime('%A')})")
print("quarters:", sorted({(d.month - 1) // 3 + 1 for d in schedule}))
