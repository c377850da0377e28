metrics = [("conversion", 0.034567), ("revenue", 1234567.891), ("tiny", 0.000012345),
           ("growth", -0.1275), ("users", 48213.0)]
for name, v in metrics:
    print(f"{name:10} | {v:>14.2f} | {v:>12.3e} | {v:>10.3g} | {v:>9.1%} | {v:>16,.2f}")
print(f"{1/3:.15f} {2/3:.17g} {1e22:g} {1e-5:g} {123456789.0:g}")
print(format(255, "08b"), format(255, "#x"), format(3.14159, "+.3f"), format(42, "^9"))
print(f"{0.5:.0f} {1.5:.0f} {2.5:.0f} {-0.0:.1f} {1234.5:_.1f} {0.0001234:.2%}")
print(float("1e-7"), float("123e20"), 0.1 + 0.7, 1 / 7)
print(repr(1.1 * 3), str(1e16), str(1.0e-4), 1e15, 12345678901234567.0)
