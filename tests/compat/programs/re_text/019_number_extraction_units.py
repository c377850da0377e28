import re

specs = ["RAM: 16GB, storage 512 GB SSD", "weight 1.35kg; battery 4,500mAh",
         "screen 13.3\" at 60Hz, 2.8 GHz CPU", "price -12.5% off 1,299.99 USD"]
unit_rx = re.compile(r"(-?\d{1,3}(?:,\d{3})*(?:\.\d+)?|-?\d+(?:\.\d+)?)\s*(GB|kg|mAh|Hz|GHz|%|USD|\")")
for s in specs:
    found = [(float(num.replace(",", "")), unit) for num, unit in unit_rx.findall(s)]
    print(s)
    print("   ->", found)
print(re.findall(r"[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?", "1e3 -2.5E-2 .75 +4 7."))
