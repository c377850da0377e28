import csv
import io

text = 'name,score\n"Multi\nline name",90\nplain,80\nbad_row\n"x",70\n'
reader = csv.reader(io.StringIO(text))
header = next(reader)
for row in reader:
    if len(row) != len(header):
        print(f"line {reader.line_num}: error: expected {len(header)} fields, got {len(row)}")
        continue
    name, score = row
    print(f"line {reader.line_num}: {name!r} -> {int(score)}")

strict = csv.reader(io.StringIO('a,"b\n'), strict=True)
try:
    list(strict)
except csv.Error as e:
    print("csv error:", e)
