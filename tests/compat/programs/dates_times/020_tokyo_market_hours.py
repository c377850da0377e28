from datetime import datetime, time
from zoneinfo import ZoneInfo

tokyo = ZoneInfo("Asia/Tokyo")
ny = ZoneInfo("America/New_York")
open_t, close_t = time(9, 0), time(15, 0)

probes = [datetime(2024, 6, 3, 21, 30, tzinfo=ny), datetime(2024, 6, 4, 1, 0, tzinfo=ny),
          datetime(2024, 12, 2, 19, 30, tzinfo=ny), datetime(2024, 12, 3, 3, 0, tzinfo=ny)]
for p in probes:
    t = p.astimezone(tokyo)
    is_open = t.weekday() < 5 and open_t <= t.time() < close_t
    print(f"NY {p:%a %H:%M %Z} -> Tokyo {t:%a %H:%M} open={is_open}")
