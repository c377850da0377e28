import json
from decimal import Decimal

text = '{"items": [{"price": 19.99, "qty": 3}, {"price": 0.1, "qty": 7}, {"price": 5.005, "qty": 2}]}'
as_float = json.loads(text)
as_dec = json.loads(text, parse_float=Decimal)

f_total = sum(i["price"] * i["qty"] for i in as_float["items"])
d_total = sum(i["price"] * i["qty"] for i in as_dec["items"])
print("float total:", f_total)
print("decimal total:", d_total)
print("int parse hook:", json.loads("[1, 22, 333]", parse_int=lambda s: int(s) * 10))
print(json.loads('{"a": 1, "a": 2}'))
print(json.loads('[["k", 1], ["k", 2]]'))
print(json.loads('{"b": 1, "a": 2}', object_pairs_hook=lambda pairs: sorted(pairs)))
