import statistics as st

latencies_ms = [120, 98, 143, 110, 99, 870, 105, 101, 130, 96, 115, 102]
print("n:", len(latencies_ms))
print("mean:", round(st.mean(latencies_ms), 2))
print("median:", st.median(latencies_ms))
print("stdev:", round(st.stdev(latencies_ms), 3))
print("pstdev:", round(st.pstdev(latencies_ms), 3))
q = st.quantiles(latencies_ms, n=4)
print("quartiles:", q)
iqr = q[2] - q[0]
outliers = [x for x in latencies_ms if x > q[2] + 1.5 * iqr]
print("outliers:", outliers)
trimmed = [x for x in latencies_ms if x not in outliers]
print("trimmed mean:", round(st.mean(trimmed), 2))
