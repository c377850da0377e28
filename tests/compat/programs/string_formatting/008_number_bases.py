flags = [0, 5, 255, 1024, 65535]
print(f"{'dec':>6} {'hex':>8} {'bin':>18} {'oct':>8}")
for v in flags:
    print(f"{v:>6} {v:>#8x} {v:>#18b} {v:>#8o}")

perms = 0o755
print(f"permissions: {perms:o} -> {perms:09b}")
mask = 0b1010_1100
print(f"mask {mask:#010b} upper hex {mask:X} padded {mask:08_b}")
print(f"big number {2**40:_} {2**40:,}")
