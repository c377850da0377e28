from functools import cached_property
import statistics

class Series:
    def __init__(self, name, values):
        self.name = name
        self.values = values
        self.computations = 0

    @cached_property
    def summary(self):
        self.computations += 1
        return {
            "n": len(self.values),
            "mean": round(statistics.mean(self.values), 3),
            "median": statistics.median(self.values),
            "stdev": round(statistics.stdev(self.values), 3),
        }

    def __repr__(self):
        return f"Series({self.name!r}, n={len(self.values)})"

s = Series("response_ms", [120, 98, 143, 101, 99, 187, 110, 131])
print(s)
print(s.summary)
print(s.summary["mean"], s.summary["median"])
print("computed", s.computations, "time(s)")
del s.summary
s.values.append(400)
print(s.summary, "computed", s.computations, "time(s)")
