import json
total = 41
def bump(n):
    global total
    total += n
    return total

class Ledger:
    def __init__(self):
        self.rows = []
    def add(self, row):
        self.rows.append(row)
        return len(self.rows)

ledger = Ledger()
ledger.add({"a": 1})
# --- cell ---
print(bump(1), ledger.add({"b": 2}), json.dumps(ledger.rows))
# --- cell ---
import statistics as st
squares = [x * x for x in range(5)]
# --- cell ---
print(st.mean(squares), type(ledger).__name__, bump.__name__, total)
