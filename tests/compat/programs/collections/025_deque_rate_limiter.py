from collections import deque

class RateLimiter:
    def __init__(self, limit, window):
        self.limit, self.window, self.hits = limit, window, deque()

    def allow(self, t):
        while self.hits and self.hits[0] <= t - self.window:
            self.hits.popleft()
        if len(self.hits) < self.limit:
            self.hits.append(t)
            return True
        return False

rl = RateLimiter(limit=3, window=10)
requests = [0, 1, 2, 3, 9, 10, 11, 12, 13, 25]
for t in requests:
    print(f"t={t:2d} {'allowed' if rl.allow(t) else 'throttled'} in-window={len(rl.hits)}")
