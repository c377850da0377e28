products = [
    ("Café au lait", 3.5),
    ("Crème brûlée", 6.25),
    ("Tea", 2.0),
    ("Jalapeño poppers", 8.75),
]

longest = max(len(name) for name, _ in products)
for name, price in products:
    dots = "." * (longest - len(name) + 3)
    print(f"{name}{dots}{price:>6.2f}")

print(f"{'Menu':=^{longest + 9}}")
print("Upper:", ", ".join(n.upper() for n, _ in products[:2]))
print("Title:", "jalapeño poppers".title())
