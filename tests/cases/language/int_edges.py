# Ints at the edges of 64 bits and of sign, and past them: the interpreter reads an int's value
# in one step for its fast paths (arithmetic, `str`, f-strings, `sum`) and must fall back to
# the big-integer path exactly where a value stops fitting. Every line is what CPython prints.

EDGES = [
    0, 1, -1, 2, -2, 255, 256, -5, -6,
    2**31 - 1, 2**31, -(2**31), -(2**31) - 1,
    2**32 - 1, 2**32, -(2**32),
    2**62, -(2**62),
    2**63 - 1, 2**63, 2**63 + 1, -(2**63) + 1, -(2**63), -(2**63) - 1,
    2**64 - 1, 2**64, 2**64 + 1, -(2**64) + 1, -(2**64), -(2**64) - 1,
    2**65, -(2**65), 10**30, -(10**30),
]

for value in EDGES:
    print(value, str(value), f"<{value}>", repr(-value), f"{value:,}", format(value, "x"))

# Every pair through each fast operator, folded into one number; a zero divisor raises.
checksum = 0
zero_divisions = 0
for a in EDGES:
    for b in EDGES:
        results = [a + b, a - b, a * b]
        if b:
            results += [a % b, a // b]
        else:
            try:
                a % b
            except ZeroDivisionError:
                zero_divisions += 1
        for result in results:
            checksum = (checksum * 1_000_003 + result) % (2**61 - 1)
print("pairs", checksum, zero_divisions)

# A few pairs printed in full, where a result crosses 64 bits.
print(2**63 - 1 + 1, -(2**63) - 1, -(2**63) * -1, (2**32) * (2**31), (2**32) * (2**32))
print(-(2**63) // -1, -(2**63) % -1, (2**63) // 2, -(2**63) // 2, 7 % -(2**63), -7 % 2**63)
print(-(2**63) + 0, 0 - -(2**63), -(2**63) - 0, abs(-(2**63)), -(-(2**63)))

# sum() reads its items the same way; the running total crosses 64 bits and comes back.
print(sum(EDGES), sum([2**63 - 1, 1, -1]), sum([-(2**63), -1, 1]), sum(x for x in EDGES if x < 0))
print(sum([2**62] * 5), sum([-(2**62)] * 5), sum([2**63 - 1] * 3, -(2**64)))

# Made strings in bulk: every value of a range across the 64-bit edge.
texts = [f"{n}" for n in range(2**63 - 3, 2**63 + 3)] + [str(n) for n in range(-(2**63) - 3, -(2**63) + 3)]
print(texts)
