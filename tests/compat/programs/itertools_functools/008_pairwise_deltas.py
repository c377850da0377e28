from itertools import pairwise

readings = [("08:00", 1012.5), ("09:00", 1011.9), ("10:00", 1009.2),
            ("11:00", 1008.8), ("12:00", 1010.1), ("13:00", 1006.0)]
for (t0, p0), (t1, p1) in pairwise(readings):
    delta = p1 - p0
    alert = "  STORM?" if delta < -2 else ""
    print(f"{t0}->{t1}: {delta:+.1f} hPa{alert}")
print("increasing steps:", sum(1 for a, b in pairwise(readings) if b[1] > a[1]))
print(list(pairwise("abcd")))
