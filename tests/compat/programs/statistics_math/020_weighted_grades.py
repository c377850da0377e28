import statistics as st

weights = {"homework": 0.2, "midterm": 0.3, "final": 0.5}
students = {
    "ana": {"homework": 92, "midterm": 78, "final": 85},
    "ben": {"homework": 70, "midterm": 88, "final": 91},
    "cy": {"homework": 100, "midterm": 65, "final": 72},
}
finals = {}
for name, g in students.items():
    score = sum(g[k] * w for k, w in weights.items())
    finals[name] = score
    letter = "A" if score >= 90 else "B" if score >= 80 else "C" if score >= 70 else "D"
    print(f"{name:4} {score:6.2f} {letter}")
print("class mean:", round(st.mean(finals.values()), 3))
print("class median:", round(st.median(finals.values()), 3))
print("spread:", round(max(finals.values()) - min(finals.values()), 2))
