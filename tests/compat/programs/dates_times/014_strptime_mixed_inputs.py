from datetime import datetime

raw = ["2024-03-05", "05/03/2024", "March 5, 2024", "5 Mar 2024 17:45",
       "20240305T174500", "not a date", "Tue, 05 Mar 2024 17:45:00 +0100"]
formats = ["%Y-%m-%d", "%d/%m/%Y", "%B %d, %Y", "%d %b %Y %H:%M",
           "%Y%m%dT%H%M%S", "%a, %d %b %Y %H:%M:%S %z"]

def parse(s):
    for fmt in formats:
        try:
            return datetime.strptime(s, fmt), fmt
        except ValueError:
            continue
    return None, None

for s in raw:
    dt, fmt = parse(s)
    if dt is None:
        print(f"{s!r}: unparseable")
    else:
        print(f"{s!r}: {dt.isoformat()} via {fmt}")
