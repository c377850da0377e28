from datetime import date, timedelta

holidays = {date(2024, 12, 25), date(2024, 12, 26), date(2025, 1, 1)}

def add_business_days(start, n):
    d = start
    while n > 0:
        d += timedelta(days=1)
        if d.weekday() < 5 and d not in holidays:
            n -= 1
    return d

tickets = [("T-1", date(2024, 12, 20), 3), ("T-2", date(2024, 12, 23), 5),
           ("T-3", date(2024, 12, 31), 1), ("T-4", date(2025, 1, 3), 2)]
for tid, opened, sla in tickets:
    due = add_business_days(opened, sla)
    print(f"{tid} opened {opened:%a %d %b} SLA {sla}d -> due {due:%a %d %b %Y}")
