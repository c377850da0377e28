import json

products = [
    {"name": "Crème brûlée", "price": 6.5, "allergens": ["egg", "milk"]},
    {"name": "Ñoquis", "price": 11.0, "allergens": ["gluten"]},
    {"name": "寿司", "price": 14.25, "allergens": []},
]
for p in sorted(products, key=lambda p: p["price"]):
    print(json.dumps(p, ensure_ascii=True, sort_keys=True))
print(json.dumps(products[2], ensure_ascii=False))
print(json.loads(json.dumps(products)) == products)
print(len(json.dumps(products)), len(json.dumps(products, ensure_ascii=False)))
