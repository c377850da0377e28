errors = ExceptionGroup("batch import", [
    KeyError("sku"),
    ValueError("qty must be positive"),
    ExceptionGroup("nested shipping", [ValueError("bad zip"), ConnectionError("carrier down")]),
    ZeroDivisionError("division by zero"),
])

value_errors, rest = errors.split(ValueError)
print("matched:", [str(e) for e in value_errors.exceptions[:1]], "nested groups:",
      sum(isinstance(e, ExceptionGroup) for e in value_errors.exceptions))

def leaves(eg):
    for e in eg.exceptions:
        if isinstance(e, BaseExceptionGroup):
            yield from leaves(e)
        else:
            yield e

print("value errors:", [str(e) for e in leaves(value_errors)])
print("rest:", [type(e).__name__ for e in leaves(rest)])
only_conn = errors.subgroup(lambda e: isinstance(e, ConnectionError))
print("subgroup:", only_conn.message if only_conn else None, [str(e) for e in leaves(only_conn)])
print(errors.message, len(errors.exceptions), str(errors))
