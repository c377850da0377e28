import json
from datetime import date, datetime
from decimal import Decimal

def encode(obj):
    if isinstance(obj, (date, datetime)):
        return obj.isoformat()
    if isinstance(obj, Decimal):
        return str(obj)
    if isinstance(obj, set):
        return sorted(obj)
    raise TypeError(f"cannot serialize {type(obj).__name__}")

record = {
    "invoice": "INV-77",
    "issued": date(2024, 5, 1),
    "updated": datetime(2024, 5, 2, 13, 45, 10),
    "total": Decimal("199.90"),
    "tags": {"urgent", "b2b", "eu"},
}
print(json.dumps(record, default=encode, indent=1))
print(json.dumps([date(2024, 1, 1), Decimal("0.10")], default=encode))
