# sluice: cpython = true
# The examples of the stdlib-gaps issue, and zoneinfo across a DST change.
import datetime
import time
import zoneinfo

print(datetime.datetime.strptime("2025-03-10 01:30", "%Y-%m-%d %H:%M"))
print(time.strptime("10 Mar 2025", "%d %b %Y")[:7])
ny = zoneinfo.ZoneInfo("America/New_York")
for hour in (6, 7, 8):
    utc = datetime.datetime(2025, 3, 9, hour, 30, tzinfo=datetime.timezone.utc)
    local = utc.astimezone(ny)
    print(local.isoformat(), local.tzname(), local.dst())
berlin = datetime.datetime(2025, 10, 26, 1, 30, tzinfo=zoneinfo.ZoneInfo("Europe/Berlin"))
print(berlin.utcoffset(), berlin.astimezone(zoneinfo.ZoneInfo("Asia/Kolkata")).isoformat())
print("Europe/Paris" in zoneinfo.available_timezones(), "America/New_York" in zoneinfo.available_timezones())
for key in ["Mars/Olympus", "america/new_york", "../etc/passwd"]:
    try:
        zoneinfo.ZoneInfo(key)
        print(key, "found")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as e:
        print(key, type(e).__name__)
print(time.gmtime(0).tm_wday, time.strftime("%A %j", time.gmtime(86400 * 40)))
