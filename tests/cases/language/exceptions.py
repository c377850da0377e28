# sluice: cpython = true
class BudgetError(ValueError):
    def __init__(self, who, over):
        super().__init__(f"{who} is over by {over}")
        self.who = who


def check(who, spent, budget):
    if spent > budget:
        raise BudgetError(who, spent - budget)
    return budget - spent


log = []
for who, spent in [("a", 10), ("b", 50)]:
    try:
        left = check(who, spent, 20)
    except BudgetError as e:
        log.append(f"error: {e} ({type(e).__mro__[1].__name__})")
    else:
        log.append(f"ok: {left}")
    finally:
        log.append("checked " + who)
print(log)

try:
    try:
        {}["missing"]
    except KeyError as e:
        raise RuntimeError("lookup failed") from e
except RuntimeError as e:
    print(type(e.__cause__).__name__, e)

try:
    raise ExceptionGroup("many", [ValueError("v"), TypeError("t")])
except* ValueError as group:
    print("values", [str(x) for x in group.exceptions])
except* TypeError as group:
    print("types", [str(x) for x in group.exceptions])
