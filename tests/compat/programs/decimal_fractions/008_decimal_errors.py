from decimal import Decimal, InvalidOperation, DivisionByZero, localcontext

inputs = ["12.50", "1e3", "abc", "  7 ", "NaN", "-0.00", "1,000"]
for raw in inputs:
    try:
        d = Decimal(raw.strip())
        print(f"{raw!r:8} -> {d!r} finite={d.is_finite()}")
    except InvalidOperation:
        print(f"{raw!r:8} -> error: invalid decimal")

try:
    Decimal(1) / Decimal(0)
except DivisionByZero as e:
    print("error: division by zero", type(e).__name__)
with localcontext() as ctx:
    ctx.traps[DivisionByZero] = False
    print("untrapped:", Decimal(1) / Decimal(0), Decimal(-1) / Decimal(0))
