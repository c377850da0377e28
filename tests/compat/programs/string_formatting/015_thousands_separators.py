populations = {
    "Tokyo": 37_400_068,
    "Delhi": 28_514_000,
    "Reykjavik": 131_136,
    "Vatican City": 825,
}

for city, pop in sorted(populations.items(), key=lambda kv: kv[1], reverse=True):
    print(f"{city:<14}{pop:>14,}{pop:>14_}{pop / 1e6:>10.2f}M")

total = sum(populations.values())
print(f"{'Total':<14}{total:>14,}")
european = format(1234567.891, ",.2f").replace(",", "X").replace(".", ",").replace("X", ".")
print("European style:", european)
print("format():", format(9876543, ","), format(0.25, ".0%"))
