from itertools import combinations_with_replacement
from collections import Counter

coins = [1, 5, 10, 25]
target = 30
ways = [c for n in range(1, 4) for c in combinations_with_replacement(coins, n) if sum(c) == target]
for w in ways:
    print(" + ".join(map(str, w)), "=", target)

dice = Counter(sum(c) for c in combinations_with_replacement(range(1, 7), 2))
print("distinct sums (unordered rolls):", sorted(dice.items())[:6])
print("count:", len(list(combinations_with_replacement("ABC", 2))))
