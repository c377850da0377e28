from collections import namedtuple

Point = namedtuple("Point", ["lat", "lon"])
Stop = namedtuple("Stop", "name point minutes", defaults=[0])

route = [
    Stop("Depot", Point(40.7128, -74.0060)),
    Stop("Client A", Point(40.7306, -73.9352), 25),
    Stop("Client B", Point(40.6782, -73.9442), 40),
]

total = sum(s.minutes for s in route)
for i, stop in enumerate(route):
    print(f"{i}. {stop.name:<9} ({stop.point.lat:.3f}, {stop.point.lon:.3f}) +{stop.minutes}m")
print("total minutes:", total)
north = max(route, key=lambda s: s.point.lat)
print("northernmost:", north.name, north.point)
print(Stop._field_defaults, Point._make([1.0, 2.0]))
