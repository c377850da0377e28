# sluice: cpython = true
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal, ROUND_HALF_UP, getcontext
from dataclasses import dataclass, field, asdict
from fractions import Fraction
from typing import Optional

d = date(2025, 7, 1)
print(d + timedelta(days=92), d.isoformat(), d.strftime("%A %d %B %Y"), (date(2025, 9, 30) - d).days)
ts = datetime(2025, 7, 1, 12, 30, tzinfo=timezone.utc)
print(ts.isoformat(), datetime.fromisoformat("2025-08-15T09:00:00").month, ts.timestamp())
print(Decimal("0.1") + Decimal("0.2"), Decimal("2.675").quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
getcontext().prec = 6
print(Decimal(1) / Decimal(7), Fraction(3, 4) + Fraction(1, 4))


@dataclass(order=True)
class Expense:
    amount: float
    category: str = "other"
    tags: list = field(default_factory=list)
    note: Optional[str] = None


items = sorted([Expense(50.0, "meals"), Expense(12.5), Expense(300.0, "travel", ["q3"])])
print(items[0], asdict(items[-1]))
