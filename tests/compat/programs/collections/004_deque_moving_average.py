from collections import deque

prices = [101.2, 102.5, 99.8, 98.4, 103.3, 105.0, 104.1, 100.9, 107.6]
window = deque(maxlen=3)
for day, p in enumerate(prices, 1):
    window.append(p)
    if len(window) == window.maxlen:
        avg = sum(window) / len(window)
        flag = "above" if p > avg else "below"
        print(f"day {day}: price {p:6.1f} ma3 {avg:7.2f} {flag}")
print("last window:", list(window))
