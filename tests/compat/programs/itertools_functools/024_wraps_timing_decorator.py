from functools import wraps

CALL_LOG = []

def audited(label):
    def deco(fn):
        @wraps(fn)
        def wrapper(*args, **kwargs):
            result = fn(*args, **kwargs)
            CALL_LOG.append(f"{label}:{fn.__name__}{args} -> {result}")
            return result
        return wrapper
    return deco

@audited("billing")
def charge(customer, cents):
    """Charge a customer."""
    return {"customer": customer, "cents": cents, "ok": cents > 0}["ok"]

charge("acme", 500)
charge("globex", 0)
print(charge.__name__, "|", charge.__doc__, "|", charge.__wrapped__.__name__)
print("\n".join(CALL_LOG))
