import calendar

cal = calendar.TextCalendar(firstweekday=calendar.MONDAY)
print(cal.formatmonth(2024, 2))
first_weekday, days = calendar.monthrange(2024, 2)
print("Feb 2024 starts on", calendar.day_name[first_weekday], "and has", days, "days")
print("leap years 2000-2030:", [y for y in range(2000, 2031) if calendar.isleap(y)])
print("leapdays 1900-2000:", calendar.leapdays(1900, 2000))
