import statistics as st

ad_spend = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
revenue = [3.1, 4.9, 7.2, 8.8, 11.1, 12.9]
r = st.correlation(ad_spend, revenue)
slope, intercept = st.linear_regression(ad_spend, revenue)
print(f"pearson r = {r:.6f}")
print(f"revenue = {slope:.4f} * spend + {intercept:.4f}")
for x in [7, 10]:
    print(f"forecast spend={x}: {slope * x + intercept:.2f}")
print("covariance:", round(st.covariance(ad_spend, revenue), 6))
