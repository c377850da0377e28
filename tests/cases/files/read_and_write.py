# Files a script writes stay in the container's own tree: text, binary, csv, json, pathlib.
import csv, errno, glob, io, json, os, pathlib, shutil

print(os.getcwd(), sorted(os.listdir("/")))
with open("data.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["region", "amount"])
    for region, amount in [("north", 10), ("south", 7), ("north", 5), ("west", 1)]:
        writer.writerow([region, amount])
totals = {}
with open("data.csv", newline="") as f:
    for row in csv.DictReader(f):
        totals[row["region"]] = totals.get(row["region"], 0) + int(row["amount"])
print(totals)

os.makedirs("out/nested", exist_ok=True)
os.makedirs("out/nested", exist_ok=True)
with open("out/summary.json", "w") as f:
    json.dump(totals, f, sort_keys=True)
print(json.load(open("out/summary.json")))

path = pathlib.Path("out") / "notes.txt"
path.write_text("first line\n")
with path.open("a") as f:
    f.write("second line\n")
print(path.read_text().splitlines(), path.exists(), path.is_file(), path.parent.is_dir(), path.stat().st_size)

blob = bytes(range(256)) * 4
with open("/tmp/blob.bin", "wb") as f:
    f.write(blob)
with open("/tmp/blob.bin", "rb") as f:
    f.seek(250)
    print(f.read(8), f.tell(), os.path.getsize("/tmp/blob.bin"))
with open("/tmp/blob.bin", "r+b") as f:
    f.write(b"XY")
print(open("/tmp/blob.bin", "rb").read(4))

shutil.copy("data.csv", "out/copy.csv")
os.rename("out/copy.csv", "out/nested/moved.csv")
print(open("out/nested/moved.csv").read() == open("data.csv").read())
print(sorted(glob.glob("out/**/*", recursive=True)))
print([(root, sorted(dirs), sorted(files)) for root, dirs, files in os.walk("out")])
print(sorted(p.name for p in pathlib.Path(".").iterdir()))
with os.scandir("out") as entries:
    print(sorted((e.name, e.is_dir(), e.is_file()) for e in entries))

os.remove("out/nested/moved.csv")
os.rmdir("out/nested")
shutil.rmtree("out")
print(os.path.exists("out"), os.listdir("."))

for mode in ["x"]:
    try:
        open("data.csv", mode)
    except FileExistsError as e:
        print("FileExistsError", e.filename)
try:
    open("missing.txt")
except FileNotFoundError as e:
    print("FileNotFoundError", errno.errorcode[e.errno], e.filename)
try:
    open("/tmp", "w")
except IsADirectoryError as e:
    print("IsADirectoryError")
f = open("data.csv")
try:
    f.write("x")
except io.UnsupportedOperation as e:
    print("UnsupportedOperation", e)
f.close()
try:
    os.rmdir("/tmp")
except PermissionError as e:
    print("PermissionError", errno.errorcode[e.errno])
pathlib.Path("touched").touch()
pathlib.Path("touched").touch()
print("touched", os.path.getsize("touched"))
os.remove("touched")
with open("ünï cödé (1).txt", "w", encoding="utf-8") as f:
    print("名前", file=f)
print(open("ünï cödé (1).txt", encoding="utf-8").read().strip(), sorted(os.listdir(".")))
