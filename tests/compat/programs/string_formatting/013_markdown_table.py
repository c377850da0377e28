users = [
    {"name": "Ada", "role": "admin", "logins": 1423, "active": True},
    {"name": "Grace", "role": "editor", "logins": 87, "active": True},
    {"name": "Linus", "role": "viewer", "logins": 0, "active": False},
]

cols = ["name", "role", "logins", "active"]
widths = {c: max(len(c), *(len(str(u[c])) for u in users)) for c in cols}

def fmt_row(values):
    return "| " + " | ".join(str(v).ljust(widths[c]) for c, v in zip(cols, values)) + " |"

print(fmt_row(cols))
print("|" + "|".join("-" * (widths[c] + 2) for c in cols) + "|")
for u in users:
    print(fmt_row([u[c] for c in cols]))
print(f"\n{sum(u['active'] for u in users)} of {len(users)} users active")
