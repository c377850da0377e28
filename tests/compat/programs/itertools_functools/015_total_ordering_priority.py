from functools import total_ordering

@total_ordering
class Ticket:
    RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3}

    def __init__(self, key, severity, age_days):
        self.key, self.severity, self.age = key, severity, age_days

    def _k(self):
        return (self.RANK[self.severity], -self.age, self.key)

    def __eq__(self, other):
        return self._k() == other._k()

    def __lt__(self, other):
        return self._k() < other._k()

    def __repr__(self):
        return f"Ticket({self.key}, {self.severity}, {self.age}d)"

tickets = [Ticket("OPS-3", "high", 2), Ticket("OPS-1", "low", 30), Ticket("OPS-9", "critical", 1),
           Ticket("OPS-4", "high", 9), Ticket("OPS-7", "medium", 4)]
for t in sorted(tickets):
    print(t)
print(tickets[0] >= tickets[3], tickets[1] > tickets[2], tickets[4] <= tickets[4])
