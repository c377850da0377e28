from itertools import product

pythons = ["3.10", "3.11"]
oses = ["linux", "macos", "windows"]
dbs = ["sqlite", "postgres"]
excluded = {("windows", "postgres")}

jobs = [(py, os_, db) for py, os_, db in product(pythons, oses, dbs)
        if (os_, db) not in excluded]
for i, (py, os_, db) in enumerate(jobs, 1):
    print(f"job {i:02d}: py{py}-{os_}-{db}")
print("total jobs:", len(jobs))
print("bits:", ["".join(b) for b in product("01", repeat=3)])
