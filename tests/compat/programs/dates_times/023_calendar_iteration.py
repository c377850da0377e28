import calendar

c = calendar.Calendar(firstweekday=6)
paydays = []
for year, month in [(2024, 1), (2024, 2), (2024, 3)]:
    weeks = c.monthdatescalendar(year, month)
    fridays = [d for w in weeks for d in w if d.weekday() == 4 and d.month == month]
    paydays.extend(fridays[1::2])
    print(calendar.month_name[month], "fridays:", [f.day for f in fridays])

print("paydays:", ", ".join(d.strftime("%m/%d") for d in paydays))
print(calendar.weekheader(3))
print("weekday(2024,7,4):", calendar.day_name[calendar.weekday(2024, 7, 4)])
