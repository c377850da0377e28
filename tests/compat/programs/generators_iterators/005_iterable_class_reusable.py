class DateRange:
    def __init__(self, start_day, end_day, step=1):
        self.start, self.end, self.step = start_day, end_day, step

    def __iter__(self):
        day = self.start
        while day <= self.end:
            yield f"2024-03-{day:02d}"
            day += self.step

    def __len__(self):
        return max(0, (self.end - self.start) // self.step + 1)

weekly = DateRange(1, 31, 7)
print(len(weekly), list(weekly))
print("second pass:", ",".join(d[-2:] for d in weekly))
sales = {"2024-03-08": 120, "2024-03-22": 75}
for d in weekly:
    print(d, sales.get(d, 0))
print("2024-03-15" in weekly, "2024-03-16" in weekly)
