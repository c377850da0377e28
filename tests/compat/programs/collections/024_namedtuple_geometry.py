from collections import namedtuple
import math

Point = namedtuple("Point", "x y")
stops = [Point(0, 0), Point(3, 4), Point(6, 8), Point(6, 0), Point(0, 0)]

legs = [math.dist(a, b) for a, b in zip(stops, stops[1:])]
for (a, b), d in zip(zip(stops, stops[1:]), legs):
    print(f"{tuple(a)} -> {tuple(b)}: {d:.3f}")
print("route length:", round(sum(legs), 3))
cx = sum(p.x for p in stops[:-1]) / 4
cy = sum(p.y for p in stops[:-1]) / 4
print("centroid:", Point(cx, cy))
x, y = stops[1]
print("unpacked:", x, y, "| as dict:", stops[2]._asdict())
