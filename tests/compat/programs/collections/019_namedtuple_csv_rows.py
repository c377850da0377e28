import csv
import io
from collections import namedtuple

data = "city,country,population\nLagos,NG,15388000\nCairo,EG,10230350\nLima,PE,10719188\nOslo,NO,709037\n"
reader = csv.reader(io.StringIO(data))
City = namedtuple("City", next(reader))
cities = [City(*row)._replace(population=int(row[2])) for row in reader]

for c in sorted(cities, key=lambda c: c.population, reverse=True):
    print(f"{c.city:6} {c.country} {c.population:>12,}")
big = [c.city for c in cities if c.population > 10_000_000]
print("megacities:", big)
print(cities[-1])
