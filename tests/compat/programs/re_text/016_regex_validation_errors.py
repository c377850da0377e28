import re

patterns = {"email": r"[\w.+-]+@[\w-]+\.[\w.-]+", "zip": r"\d{5}(-\d{4})?", "hex": r"#?[0-9a-fA-F]{6}"}
inputs = [("email", "a.b+tag@mail.co"), ("email", "bad@"), ("zip", "12345-6789"),
          ("zip", "1234"), ("hex", "#1a2B3c"), ("hex", "#12345g")]
for kind, value in inputs:
    ok = re.fullmatch(patterns[kind], value) is not None
    print(f"{kind:5} {value:18} {'valid' if ok else 'INVALID'}")

for bad in ["(unclosed", "a{2,1}", "*star"]:
    try:
        re.compile(bad)
    except re.error as e:
        print(f"error: {bad!r}: {e.msg} at position {e.pos}")
