import statistics as st

daily_signups = {"Mon": 120, "Tue": 132, "Wed": 118, "Thu": 125, "Fri": 240,
                 "Sat": 80, "Sun": 127}
vals = list(daily_signups.values())
mu, sigma = st.mean(vals), st.stdev(vals)
print(f"mean={mu:.2f} stdev={sigma:.2f}")
for day, v in daily_signups.items():
    z = (v - mu) / sigma
    flag = " <- anomaly" if abs(z) > 1.5 else ""
    print(f"{day} {v:4d} z={z:+.2f}{flag}")
nd = st.NormalDist(mu, sigma)
print(f"P(signups < 100) = {nd.cdf(100):.4f}")
print(f"95th pct = {nd.inv_cdf(0.95):.2f}")
