# sluice: cpython = true
from dataclasses import dataclass


@dataclass
class Point:
    x: int
    y: int


def describe(value):
    match value:
        case {"type": "expense", "amount": float(a) | int(a)} if a > 100:
            return f"big expense {a}"
        case {"type": "expense"}:
            return "small expense"
        case [first, *rest]:
            return f"list starting {first} with {len(rest)} more"
        case Point(x=0, y=0):
            return "origin"
        case Point(x=x, y=y):
            return f"point {x},{y}"
        case str() as s:
            return f"text {s!r}"
        case _:
            return "something else"


for v in [{"type": "expense", "amount": 250.5}, {"type": "expense", "amount": 3}, [1, 2, 3], Point(0, 0), Point(1, 2), "hi", 42]:
    print(describe(v))
