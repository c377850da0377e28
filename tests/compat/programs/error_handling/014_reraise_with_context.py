log = []

def load_user(uid, db):
    try:
        return db[uid]
    except KeyError:
        log.append(f"lookup failed for {uid}")
        raise

def build_report(uids, db):
    report = []
    for uid in uids:
        try:
            user = load_user(uid, db)
        except KeyError as e:
            report.append(f"{uid}: <missing> ({type(e).__name__} {e})")
            continue
        report.append(f"{uid}: {user['name']} ({user['plan']})")
    return report

db = {101: {"name": "Ada", "plan": "pro"}, 103: {"name": "Kay", "plan": "free"}}
for line in build_report([101, 102, 103, 104], db):
    print(line)
print("log:", log)
try:
    try:
        1 / 0
    except ZeroDivisionError:
        raise ValueError("could not compute ratio")
except ValueError as e:
    print(e, "| context:", type(e.__context__).__name__, "| cause:", e.__cause__)
