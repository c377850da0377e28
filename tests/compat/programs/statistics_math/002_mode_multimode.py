import statistics as st

survey = ["blue", "green", "blue", "red", "green", "blue", "green", "yellow"]
print("mode:", st.mode(survey))
print("multimode:", st.multimode(survey))
sizes = [38, 40, 40, 42, 38, 44, 40]
print("size mode:", st.mode(sizes), "median_low:", st.median_low(sizes), "median_high:", st.median_high([1, 2, 3, 4]))
print("grouped median:", st.median_grouped([52, 52, 53, 54, 54, 54, 55]))
try:
    st.mean([])
except st.StatisticsError as e:
    print("error:", e)
