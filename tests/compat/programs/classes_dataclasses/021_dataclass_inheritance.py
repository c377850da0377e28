from dataclasses import dataclass, field, fields

@dataclass
class Event:
    event_id: str
    ts: str
    source: str = "api"

@dataclass
class ClickEvent(Event):
    element: str = ""
    x: int = 0
    y: int = 0

@dataclass
class PurchaseEvent(Event):
    amount: float = 0.0
    items: list[str] = field(default_factory=list)

events = [
    ClickEvent("e1", "2024-06-01T10:00", element="buy-btn", x=120, y=44),
    PurchaseEvent("e2", "2024-06-01T10:01", source="web", amount=59.9, items=["sku-1", "sku-9"]),
    Event("e3", "2024-06-01T10:02"),
]
for ev in events:
    print(type(ev).__name__, ev)
print([f.name for f in fields(PurchaseEvent)])
print(sum(e.amount for e in events if isinstance(e, PurchaseEvent)))
