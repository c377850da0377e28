import statistics as st
from fractions import Fraction

team_a = [82, 85, 88, 90, 79]
team_b = [60, 95, 100, 70, 98]
for name, scores in [("A", team_a), ("B", team_b)]:
    print(f"team {name}: mean={st.mean(scores)} pvariance={st.pvariance(scores)} "
          f"variance={st.variance(scores)} stdev={st.stdev(scores):.3f}")
print("exact fractions:", st.pvariance([Fraction(1, 3), Fraction(2, 3), Fraction(1)]))
print("with known mean:", st.pvariance(team_a, mu=84.8))
print("fmean:", st.fmean([1, 2, 3, 4.5]), "weighted:", st.fmean([90, 70], weights=[3, 1]))
