from dataclasses import dataclass, field

@dataclass
class Reading:
    sensor: str
    celsius: float
    fahrenheit: float = field(init=False)
    status: str = field(init=False, default="ok")

    def __post_init__(self):
        if not self.sensor:
            raise ValueError("sensor id is required")
        self.sensor = self.sensor.strip().upper()
        self.fahrenheit = round(self.celsius * 9 / 5 + 32, 1)
        if self.celsius > 80:
            self.status = "overheat"
        elif self.celsius < -20:
            self.status = "freezing"

raw = [("t1 ", 21.5), ("t2", 85.0), ("t3", -30.2), ("", 10.0)]
readings = []
for sensor, c in raw:
    try:
        readings.append(Reading(sensor, c))
    except ValueError as e:
        print("skipped:", e)
for r in readings:
    print(f"{r.sensor}: {r.celsius}C / {r.fahrenheit}F [{r.status}]")
print(readings[0])
