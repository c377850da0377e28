import csv
import io

crm = """email,name,plan
ann@x.com,Ann,free
bob@x.com,Bob,pro
ANN@X.COM,Ann B.,pro
cat@x.com,Cat,free
"""
billing = """email,mrr
bob@x.com,49
ann@x.com,49
dan@x.com,99
"""
people = {}
for row in csv.DictReader(io.StringIO(crm)):
    people[row["email"].lower()] = row  # later rows win
mrr = {r["email"].lower(): int(r["mrr"]) for r in csv.DictReader(io.StringIO(billing))}

out = io.StringIO()
w = csv.DictWriter(out, ["email", "name", "plan", "mrr"], lineterminator="\n", restval="0")
w.writeheader()
for email in sorted(set(people) | set(mrr)):
    row = dict(people.get(email, {"name": "?", "plan": "?"}), email=email)
    if email in mrr:
        row["mrr"] = mrr[email]
    w.writerow(row)
print(out.getvalue(), end="")
