import io
from contextlib import closing

def read_records(source, name):
    print(f"open {name}")
    try:
        for i, line in enumerate(source, start=1):
            yield i, line.strip().split(",")
    finally:
        print(f"close {name}")

data = io.StringIO("id,val\n1,10\n2,20\n3,30\n4,40\n")
with closing(read_records(data, "metrics.csv")) as records:
    for lineno, fields in records:
        if lineno == 1:
            continue
        print(lineno, fields)
        if fields[0] == "2":
            print("found target, stopping early")
            break

gen = read_records(io.StringIO("a\nb\n"), "other.csv")
print(next(gen))
gen.close()
print("done")
