from collections import namedtuple

Task = namedtuple("Task", ["name", "priority", "owner", "done"], defaults=["unassigned", False])
tasks = [Task("write docs", 2), Task("fix bug", 1, "sam"), Task("deploy", 1, "kim", True),
         Task("triage", 3, "sam")]

for t in sorted(tasks, key=lambda t: (t.done, t.priority, t.name)):
    mark = "x" if t.done else " "
    print(f"[{mark}] P{t.priority} {t.name:12} {t.owner}")
print(Task._field_defaults)
owners = {}
for t in tasks:
    owners.setdefault(t.owner, []).append(t.name)
print(sorted(owners.items()))
