import csv
import io

users = [
    {"id": 3, "name": "Zoe", "email": "zoe@example.com", "active": True},
    {"id": 1, "name": "Adam, Jr.", "email": "adam@example.com", "active": False},
    {"id": 2, "name": 'Bea "B" Smith', "email": "bea@example.com", "active": True},
]

buf = io.StringIO()
writer = csv.DictWriter(buf, fieldnames=["id", "name", "email", "active"])
writer.writeheader()
for u in sorted(users, key=lambda u: u["id"]):
    writer.writerow(u)

print(buf.getvalue(), end="")
print("bytes:", len(buf.getvalue()))
