from functools import singledispatch
from datetime import date
from decimal import Decimal

@singledispatch
def render(value):
    return str(value)

@render.register
def _(value: float):
    return f"{value:,.2f}"

@render.register
def _(value: date):
    return value.strftime("%d %b %Y")

@render.register(list)
def _(value):
    return "[" + ", ".join(render(v) for v in value) + "]"

@render.register(type(None))
def _(value):
    return "—"

row = {"name": "Widget", "price": 1234.5, "launched": date(2023, 9, 1),
       "sizes": [1.5, 2.25], "discount": None, "cost": Decimal("7.10")}
for k, v in row.items():
    print(f"{k:9}: {render(v)}")
print("registered:", sorted(t.__name__ for t in render.registry))
