records = [{"id": 1, "price": 10.0, "qty": 2}, {"id": 2, "price": 5.0, "qty": 0}]

def risky_ops():
    yield "missing key", lambda: records[0]["discount"]
    yield "bad index", lambda: records[5]
    yield "divide", lambda: records[0]["price"] / records[1]["qty"]
    yield "int parse", lambda: int("12.5")
    yield "none attr", lambda: None.upper()
    yield "type mix", lambda: "total: " + records[0]["price"]
    yield "ok", lambda: records[0]["price"] * records[0]["qty"]

for label, op in risky_ops():
    try:
        result = op()
    except (KeyError, IndexError, ZeroDivisionError, ValueError) as e:
        print(f"{label:<12} {type(e).__name__}: {e}")
    except Exception as e:
        print(f"{label:<12} other {type(e).__name__}")
    else:
        print(f"{label:<12} result={result}")
