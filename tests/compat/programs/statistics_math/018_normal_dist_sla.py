from statistics import NormalDist

latency = NormalDist(mu=200, sigma=35)
for sla in [250, 275, 300]:
    print(f"P(latency <= {sla}ms) = {latency.cdf(sla):.4%}")
print("p99:", round(latency.inv_cdf(0.99), 2))
lo, hi = latency.inv_cdf(0.025), latency.inv_cdf(0.975)
print(f"95% interval: {lo:.1f} - {hi:.1f}")
combined = latency + NormalDist(50, 12)
print("with network hop:", round(combined.mean, 2), round(combined.stdev, 4))
print("overlap:", round(NormalDist(200, 35).overlap(NormalDist(230, 35)), 6))
