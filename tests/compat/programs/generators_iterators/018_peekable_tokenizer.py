class Peekable:
    _SENTINEL = object()

    def __init__(self, iterable):
        self._it = iter(iterable)
        self._peeked = self._SENTINEL

    def __iter__(self):
        return self

    def __next__(self):
        if self._peeked is not self._SENTINEL:
            value, self._peeked = self._peeked, self._SENTINEL
            return value
        return next(self._it)

    def peek(self, default=None):
        if self._peeked is self._SENTINEL:
            self._peeked = next(self._it, default)
        return self._peeked

def tokens(text):
    yield from text.replace("(", " ( ").replace(")", " ) ").split()

stream = Peekable(tokens("status = active AND (age >= 30 OR vip = true)"))
clauses, depth = [], 0
for tok in stream:
    if tok in ("AND", "OR"):
        clauses.append(f"{tok} (next: {stream.peek()!r})")
    depth += tok == "("
print(clauses)
print("saw parens:", depth, "| after end peek:", stream.peek("EOF"))
