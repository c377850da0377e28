# sluice: cpython = true
# Strings and bytes compare through the guest's own memcmp (mem_compare.rs), which reads eight
# bytes at a time: every length around a word, a difference at every offset, bytes either
# side of 0x80 (memcmp compares them unsigned), against CPython.
import hashlib

outcomes = []
for length in range(0, 26):
    base = bytes((i * 37 + 11) % 256 for i in range(length))
    outcomes.append((base == bytes(base), base < bytes(base), base <= bytes(base)))
    for at in range(length):
        for byte in (0, 1, 0x7F, 0x80, 0xFF):
            other = base[:at] + bytes([byte]) + base[at + 1:]
            outcomes.append((base < other, base == other, base > other, base[:at + 1] < other))
            text, other_text = base.decode("latin-1"), other.decode("latin-1")
            outcomes.append((text < other_text, text == other_text, {text: 1}.get(other_text)))
print(len(outcomes), hashlib.sha256(repr(outcomes).encode()).hexdigest())
print(sorted([b"abcdefgh\x80", b"abcdefgh\x7f", b"abcdefgh", b"abcdefgi", b"abcdefg\xff"]))
print(sorted(["kiwi-and-more", "kiwi-and-mord", "kiwi-and-mor", "kiwi-\u00e9", "kiwi-e"]))
print(b"\x00" * 9 < b"\x00" * 8 + b"\x01", "a" * 17 == "a" * 16 + "a", "x" * 24 < "x" * 23 + "y")
