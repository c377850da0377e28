import time

epoch = time.gmtime(0)
print("epoch:", time.strftime("%Y-%m-%d %H:%M:%S", epoch))
print("weekday of epoch:", time.strftime("%A", epoch), epoch.tm_wday)
fixed = time.struct_time((2023, 11, 5, 9, 7, 3, 6, 309, 0))
print(time.strftime("%a %d %b %Y %H:%M:%S", fixed))
print(time.strftime("%j|%p|%I|%y", fixed))
t = time.gmtime(1700000000)
print("1.7e9 seconds:", time.strftime("%Y-%m-%dT%H:%M:%SZ", t))
print("fields:", t.tm_year, t.tm_mon, t.tm_mday, t.tm_yday)
print("calendar.timegm roundtrip:", __import__("calendar").timegm(t))
