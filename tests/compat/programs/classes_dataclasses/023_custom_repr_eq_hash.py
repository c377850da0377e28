class Coordinate:
    __slots__ = ("lat", "lon")

    def __init__(self, lat: float, lon: float):
        self.lat = round(lat, 4)
        self.lon = round(lon, 4)

    def __repr__(self):
        return f"Coordinate({self.lat}, {self.lon})"

    def __eq__(self, other):
        return isinstance(other, Coordinate) and (self.lat, self.lon) == (other.lat, other.lon)

    def __hash__(self):
        return hash((self.lat, self.lon))

pings = [(51.50735, -0.12776), (48.85661, 2.35222), (51.507349, -0.127761), (40.41678, -3.70379)]
coords = [Coordinate(*p) for p in pings]
unique = []
seen = set()
for c in coords:
    if c not in seen:
        seen.add(c)
        unique.append(c)
print("all:", coords)
print("unique:", unique)
print(coords[0] == coords[2], coords[0] == (51.5074, -0.1278))
visits = {}
for c in coords:
    visits[c] = visits.get(c, 0) + 1
print(sorted(visits.values(), reverse=True))
