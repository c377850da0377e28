import re

rules = [
    (r"(?=.*[a-z])", "lowercase"),
    (r"(?=.*[A-Z])", "uppercase"),
    (r"(?=.*\d)", "digit"),
    (r"(?=.*[^\w\s])", "symbol"),
    (r"(?=.{10,})", "10+ chars"),
    (r"(?!.*(.)\1\1)", "no triple repeat"),
]
candidates = ["password", "Passw0rd!", "C0rrect-Horse", "aaaBBB111!!!", "Tr0ub4dor&3x"]
for pw in candidates:
    failed = [label for rx, label in rules if not re.match(rx, pw)]
    print(f"{pw:14} {'OK' if not failed else 'missing: ' + ', '.join(failed)}")

print(re.findall(r"\d+(?= USD)", "10 USD, 20 EUR, 30 USD"))
print(re.findall(r"(?<=\$)\d+(?:\.\d\d)?", "cost $12.50 or $7, not 9"))
