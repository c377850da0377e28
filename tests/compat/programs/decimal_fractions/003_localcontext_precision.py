from decimal import Decimal, localcontext, getcontext

third = Decimal(1) / Decimal(3)
print("default prec", getcontext().prec, ":", third)
with localcontext() as ctx:
    ctx.prec = 6
    print("prec 6:", Decimal(1) / Decimal(3), Decimal(2) / Decimal(3))
    print("sqrt 2:", Decimal(2).sqrt())
with localcontext(prec=50):
    print("prec 50 sqrt 2:", Decimal(2).sqrt())
print("back to default:", Decimal(2) / Decimal(7))
print("exp(1):", Decimal(1).exp())
