# Repetition of every sequence type, at counts where copying by doubling ends on a partial
# chunk, and the edge counts; the in-place forms too.
for count in (0, 1, 2, 3, 5, 7, 8, 9, 1000, 100_003):
    text = "ab" * count
    data = b"\x00\x01" * count
    items = [0, None] * count
    pair = (1, "x") * count
    assert len(text) == len(data) == len(items) == len(pair) == 2 * count
    assert text == "".join("ab" for _ in range(count))
    assert data == bytes([0, 1]) * count == bytearray(b"\x00\x01") * count
    assert items == [v for _ in range(count) for v in (0, None)]
    assert pair == tuple(v for _ in range(count) for v in (1, "x"))
    print(count, len(text), text[-3:], data[-3:], items[-3:], pair[-3:])

print("x" * -1 == "", [1] * -5, count * "ab" == "ab" * count)

grown = [[]] * 3
grown[0].append(1)
print(grown, grown[0] is grown[2])

in_place = [1, 2, 3]
alias = in_place
in_place *= 4
print(in_place, alias is in_place)
in_place *= 0
print(in_place)
buffer = bytearray(b"xyz")
buffer *= 5
print(buffer)

big = b"\0" * 1_000_000
print(len(big), big.count(0), len("=" * 250_000))
