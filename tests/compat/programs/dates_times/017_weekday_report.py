from datetime import date, timedelta
import calendar

start = date(2024, 9, 1)
commits = {start + timedelta(days=i): (i * 7) % 5 + (i % 3) for i in range(28)}

per_weekday = [0] * 7
for d, n in commits.items():
    per_weekday[d.weekday()] += n

for idx, total in enumerate(per_weekday):
    print(f"{calendar.day_abbr[idx]}: {total:3d} {'*' * total}")
weekend = per_weekday[5] + per_weekday[6]
print("weekend share:", f"{weekend / sum(per_weekday):.1%}")
