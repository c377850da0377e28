from dataclasses import dataclass, field

@dataclass(slots=True, kw_only=True)
class Metric:
    name: str
    value: float
    unit: str = ""
    labels: dict[str, str] = field(default_factory=dict)

    def render(self) -> str:
        lbl = ",".join(f'{k}="{v}"' for k, v in sorted(self.labels.items()))
        return f"{self.name}{{{lbl}}} {self.value}{self.unit}"

metrics = [
    Metric(name="http_requests_total", value=1027, labels={"method": "GET", "code": "200"}),
    Metric(name="latency_p99", value=0.245, unit="s", labels={"route": "/api"}),
    Metric(name="queue_depth", value=3),
]
for m in metrics:
    print(m.render())
try:
    Metric("cpu", 0.5)
except TypeError as e:
    print("positional args rejected:", type(e).__name__)
try:
    metrics[0].extra = 1
except AttributeError:
    print("slots prevent new attributes")
print(hasattr(metrics[0], "__dict__"))
