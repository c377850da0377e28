from functools import partial

def fmt_money(amount, currency="USD", decimals=2, sep=",", point="."):
    text = f"{amount:,.{decimals}f}".translate(str.maketrans({",": sep, ".": point}))
    return f"{currency} {text}"

eur = partial(fmt_money, currency="EUR", sep=".", point=",")
jpy = partial(fmt_money, currency="JPY", decimals=0)
for amount in [1234.5, 1000000, 0.994]:
    print(fmt_money(amount), "|", eur(amount), "|", jpy(amount))

print(jpy.func.__name__, jpy.args, sorted(jpy.keywords.items()))
to_int_base2 = partial(int, base=2)
print([to_int_base2(s) for s in ["101", "1111", "100000"]])
