from functools import total_ordering

@total_ordering
class Priority:
    LEVELS = {"low": 0, "medium": 1, "high": 2, "critical": 3}

    def __init__(self, label: str):
        self.label = label.lower()

    def __eq__(self, other):
        if not isinstance(other, Priority):
            return NotImplemented
        return self.LEVELS[self.label] == self.LEVELS[other.label]

    def __lt__(self, other):
        if not isinstance(other, Priority):
            return NotImplemented
        return self.LEVELS[self.label] < self.LEVELS[other.label]

    def __repr__(self):
        return f"Priority({self.label!r})"

tickets = [("T-1", "Medium"), ("T-2", "critical"), ("T-3", "low"), ("T-4", "HIGH"), ("T-5", "medium")]
ranked = sorted(tickets, key=lambda t: Priority(t[1]), reverse=True)
for tid, p in ranked:
    print(tid, Priority(p))
print(Priority("high") >= Priority("medium"), Priority("low") <= Priority("low"))
print(Priority("low") == "low")
