import re

def to_snake(name):
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z\d])([A-Z])", r"\1_\2", s)
    return s.replace("-", "_").lower()

def to_camel(name, upper=False):
    parts = re.split(r"[_\-\s]+", name)
    out = parts[0].lower() + "".join(p.capitalize() for p in parts[1:])
    return out[:1].upper() + out[1:] if upper else out

fields = ["userId", "HTTPResponseCode", "createdAt", "getJSONData", "already_snake", "kebab-case-key", "ID"]
for f in fields:
    snake = to_snake(f)
    print(f"{f:18} -> {snake:20} -> {to_camel(snake):18} {to_camel(snake, upper=True)}")
