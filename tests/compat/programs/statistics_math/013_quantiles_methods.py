import statistics as st

order_values = [12.5, 18.0, 22.75, 25.0, 31.2, 40.0, 44.4, 58.0, 61.25, 99.99, 150.0]
print("deciles exclusive:", [round(q, 2) for q in st.quantiles(order_values, n=10)])
print("deciles inclusive:", [round(q, 2) for q in st.quantiles(order_values, n=10, method="inclusive")])
p = st.quantiles(order_values, n=100, method="inclusive")
print("p50, p90, p99:", round(p[49], 3), round(p[89], 3), round(p[98], 3))
buckets = {"small": 0, "medium": 0, "large": 0}
lo, hi = st.quantiles(order_values, n=3)
for v in order_values:
    buckets["small" if v <= lo else "medium" if v <= hi else "large"] += 1
print("terciles:", round(lo, 3), round(hi, 3), buckets)
