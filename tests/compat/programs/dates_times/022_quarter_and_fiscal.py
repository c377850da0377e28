from datetime import date

invoices = [("INV-1", "2023-10-02", 1200), ("INV-2", "2024-01-15", 800),
            ("INV-3", "2024-03-31", 450), ("INV-4", "2024-04-01", 990),
            ("INV-5", "2024-09-30", 310), ("INV-6", "2024-07-04", 75)]

def fiscal(d):  # fiscal year starts Oct 1
    fy = d.year + 1 if d.month >= 10 else d.year
    q = ((d.month - 10) % 12) // 3 + 1
    return f"FY{fy}Q{q}"

totals = {}
for inv, day, amt in invoices:
    d = date.fromisoformat(day)
    key = fiscal(d)
    totals[key] = totals.get(key, 0) + amt
    print(inv, d.strftime("%d-%b-%Y"), key)
for k in sorted(totals):
    print(k, totals[k])
