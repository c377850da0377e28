from itertools import groupby, accumulate, pairwise

clicks = [3, 5, 9, 40, 41, 47, 120, 122, 300]  # seconds
GAP = 30
# new session whenever the gap exceeds GAP
breaks = [0] + [1 if b - a > GAP else 0 for a, b in pairwise(clicks)]
session_ids = list(accumulate(breaks))
for sid, grp in groupby(zip(session_ids, clicks), key=lambda p: p[0]):
    times = [t for _, t in grp]
    print(f"session {sid}: {len(times)} clicks, {times[0]}s-{times[-1]}s, span {times[-1] - times[0]}s")
print("sessions:", session_ids[-1] + 1)
