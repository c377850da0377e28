tickets = [7, 42, 313, 2048]
for t in tickets:
    print(f"TICKET-{t:05d}", "INV-" + str(t).zfill(6), "#{:>04}".format(t))

dates = [(2024, 1, 5), (2023, 11, 30), (2024, 12, 1)]
for y, m, d in sorted(dates):
    print(f"{y:04d}-{m:02d}-{d:02d}")

times = [3725, 59, 86399]
for secs in times:
    h, rem = divmod(secs, 3600)
    mi, s = divmod(rem, 60)
    print(f"{secs:>6}s = {h:02d}:{mi:02d}:{s:02d}")
