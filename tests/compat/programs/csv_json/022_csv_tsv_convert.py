import csv
import io

tsv = "id\ttitle\tviews\n1\tHello, world\t1500\n2\tTabs\tand\tmore\t20\n3\t\"Quoted\" title\t7\n"
reader = csv.reader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE)
header = next(reader)
out = io.StringIO()
w = csv.writer(out, lineterminator="\n")
w.writerow(header)
for row in reader:
    if len(row) != len(header):
        print(f"skipping malformed row with {len(row)} fields: {row}")
        continue
    w.writerow(row)
print(out.getvalue(), end="")
