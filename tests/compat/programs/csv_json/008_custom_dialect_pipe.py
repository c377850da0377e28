import csv
import io

csv.register_dialect("pipes", delimiter="|", quotechar="'", skipinitialspace=True,
                     lineterminator="\n")
text = """host | cpu | mem
web-1 | 73.5 | 'high, swapping'
web-2 | 12.0 | ok
db-1 | 91.2 | 'critical | oom'
"""

reader = csv.DictReader(io.StringIO(text), dialect="pipes")
rows = [{k.strip(): v.strip() for k, v in r.items()} for r in reader]
for r in sorted(rows, key=lambda r: -float(r["cpu"])):
    print(f"{r['host']:6} {float(r['cpu']):5.1f}% {r['mem']}")
print("dialects include pipes:", "pipes" in csv.list_dialects())
out = io.StringIO()
csv.writer(out, dialect="pipes").writerow(["a|b", "c"])
print(out.getvalue(), end="")
