from itertools import compress, filterfalse, takewhile, dropwhile

columns = ["id", "name", "email", "password_hash", "created", "ssn"]
public_mask = [1, 1, 1, 0, 1, 0]
print("public:", list(compress(columns, public_mask)))
print("secret:", list(filterfalse(lambda c: c in compress(columns, public_mask), columns)))

log = ["# header", "# generated", "ts=1 ok", "ts=2 ok", "# mid comment", "ts=3 fail"]
print("preamble:", list(takewhile(lambda l: l.startswith("#"), log)))
print("body:", list(dropwhile(lambda l: l.startswith("#"), log)))
