import traceback

def parse_record(line):
    name, qty, price = line.split(";")
    return name, int(qty), float(price)

lines = ["bolt;10;0.25", "nut;x;0.1", "washer;5", "gear;3;12.5;extra", "spring;7;1.75"]
parsed = []
for line in lines:
    try:
        parsed.append(parse_record(line))
    except ValueError as e:
        msg = "".join(traceback.format_exception_only(type(e), e)).strip()
        print(f"skip {line!r}: {msg}")
print("parsed:", parsed)
err = KeyError("customer_id")
print(traceback.format_exception_only(err)[-1], end="")
