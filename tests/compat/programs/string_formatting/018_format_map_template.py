class Defaulting(dict):
    def __missing__(self, key):
        return f"<{key}?>"

template = "Hello {first} {last}, your order #{order_id} ships to {city}."
customers = [
    {"first": "Maya", "last": "Lin", "order_id": 5512, "city": "Denver"},
    {"first": "Omar", "order_id": 5513},
]
for c in customers:
    print(template.format_map(Defaulting(c)))

from string import Template
t = Template("$user exported $count rows to ${target}_backup")
print(t.substitute(user="etl", count=1200, target="sales"))
print(t.safe_substitute(user="etl"))
