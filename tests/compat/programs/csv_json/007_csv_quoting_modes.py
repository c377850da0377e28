import csv
import io

rows = [["id", "note", "amount"], [1, "plain", 3.5], [2, "has, comma", 10],
        [3, 'quote "inside"', -2.25], [4, "line\nbreak", 0]]

for name, mode in [("MINIMAL", csv.QUOTE_MINIMAL), ("ALL", csv.QUOTE_ALL),
                   ("NONNUMERIC", csv.QUOTE_NONNUMERIC)]:
    buf = io.StringIO()
    csv.writer(buf, quoting=mode, lineterminator="\n").writerows(rows)
    print(f"--- {name}")
    print(buf.getvalue(), end="")

parsed = list(csv.reader(io.StringIO(buf.getvalue()), quoting=csv.QUOTE_NONNUMERIC))
print("roundtrip types:", [type(v).__name__ for v in parsed[1]])
