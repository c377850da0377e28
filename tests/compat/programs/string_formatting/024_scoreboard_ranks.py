scores = {"delta": 88.5, "alpha": 92.25, "echo": 88.5, "bravo": 79.0, "charlie": 95.125}

ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
suffix = {1: "st", 2: "nd", 3: "rd"}
prev, rank = None, 0
for pos, (team, pts) in enumerate(ranked, start=1):
    if pts != prev:
        rank = pos
    prev = pts
    ordinal = f"{rank}{suffix.get(rank, 'th')}"
    print(f"{ordinal:>4}  {team.capitalize():<8} {pts:7.2f} pts")

spread = ranked[0][1] - ranked[-1][1]
print("Spread between first and last: {:.3f}".format(spread))
