from datetime import datetime

ts = datetime(2024, 7, 4, 15, 30, 5)
formats = [
    "%Y-%m-%d %H:%M:%S",
    "%d/%m/%y",
    "%b %d, %Y",
    "%A, %B %d",
    "%I:%M %p",
    "day %j of %Y",
    "%a %H%M",
    "week %U / %W",
]
for fmt in formats:
    print(f"{fmt!r:24} -> {ts.strftime(fmt)}")
