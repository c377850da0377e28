import re
from string import Template

template = "Hi {name}, your order {order_id} of {total} ships {when}. {unknown} stays."
values = {"name": "Dana", "order_id": "#A-1009", "total": "$42.00", "when": "tomorrow"}

def fill(m):
    key = m.group(1)
    return values.get(key, m.group(0))

print(re.sub(r"\{(\w+)\}", fill, template))
print("placeholders:", re.findall(r"\{(\w+)\}", template))
t = Template("Dear $name, balance: $$${amount}")
print(t.substitute(name="Lee", amount="10.50"))
print(t.safe_substitute(name="Lee"))
try:
    t.substitute(amount="1")
except KeyError as e:
    print("error: missing key", e)
