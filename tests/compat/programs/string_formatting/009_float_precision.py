measurements = [3.14159265, 2.0, 0.000123456, 123456789.123, -0.5]

for m in measurements:
    print(f"{m:>16.4f} | {m:>12.3e} | {m:>12.5g} | {m:+.2f}")

print(f"{1/3:.10f}")
print(f"{2/3:.0f} {2.5:.0f} {3.5:.0f}")
print(f"{1e-7:g} {1e16:g} {123.0:g}")
print(f"{float('inf'):>8} {float('-inf'):<8}|")
print(round(2.675, 2), f"{2.675:.2f}")
