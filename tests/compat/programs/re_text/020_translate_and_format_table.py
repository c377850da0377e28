rows = [("Widget", 3, 4.5), ("Gizmo—deluxe", 12, 19.99), ("Ünïcødé thing", 1, 1000.0)]
ascii_map = str.maketrans({"—": "-", "Ü": "U", "ï": "i", "ø": "o", "é": "e"})
header = ("Item", "Qty", "Price")
clean = [(name.translate(ascii_map), q, p) for name, q, p in rows]
w = max(len(r[0]) for r in clean + [header])
print(f"{header[0]:<{w}} | {header[1]:>4} | {header[2]:>9}")
print("-" * w + "-+-" + "-" * 4 + "-+-" + "-" * 9)
for name, q, p in clean:
    print(f"{name:<{w}} | {q:>4} | {p:>9,.2f}")
print("strip chars:", "xx--hello--xx".strip("x-"), "|", "a,b,,c".split(","), "|", "a b  c".split())
print("expandtabs:", repr("a\tbb\tccc".expandtabs(4)), "| swapcase:", "Hello World".swapcase())
print("isdigit vs isnumeric:", "²".isdigit(), "½".isnumeric(), "12".isdecimal(), "x1".isalnum())
