import math

def haversine_km(lat1, lon1, lat2, lon2):
    r = 6371.0
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp = p2 - p1
    dl = math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(a))

cities = {"Berlin": (52.52, 13.405), "Tokyo": (35.6762, 139.6503), "New York": (40.7128, -74.006)}
names = list(cities)
for i, a in enumerate(names):
    for b in names[i + 1:]:
        print(f"{a} - {b}: {haversine_km(*cities[a], *cities[b]):,.0f} km")
print("hypot:", math.hypot(3, 4, 12), "degrees(pi):", math.degrees(math.pi))
print("log10(1e6):", math.log10(1e6), "log2(1024):", math.log2(1024), "e:", round(math.e, 10))
