import csv
import io

rows = [["Product", "Desc", "Price"], ["Lamp", "Warm white, 40W", "19.99"],
        ["Rug", '5\'x8" wool', "149.00"], ["Mug", "", "4.50"]]
buf = io.StringIO()
csv.writer(buf, dialect="excel").writerows(rows)
raw = buf.getvalue()
print(repr(raw))
tab = io.StringIO()
csv.writer(tab, dialect="excel-tab").writerow(rows[1])
print("excel-tab:", repr(tab.getvalue()))
back = list(csv.reader(io.StringIO(raw)))
print("roundtrip equal:", back == rows)
d = csv.get_dialect("excel")
print("excel dialect:", repr(d.delimiter), repr(d.quotechar), repr(d.lineterminator), d.doublequote)
