import re

notes = """Meeting moved to 2024-03-15. Invoice due 03/31/2024.
Deadline: 15.04.2024, retro on 2024-4-2 (invalid), launch 2024-12-01."""

iso = re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b")
us = re.compile(r"\b(?P<m>\d{2})/(?P<d>\d{2})/(?P<y>\d{4})\b")
eu = re.compile(r"\b(?P<d>\d{2})\.(?P<m>\d{2})\.(?P<y>\d{4})\b")

found = []
for name, rx in [("iso", iso), ("us", us), ("eu", eu)]:
    for m in rx.finditer(notes):
        found.append((m.start(), name, "{y}-{m}-{d}".format(**m.groupdict())))
for pos, name, norm in sorted(found):
    print(f"@{pos:3d} {name:3} -> {norm}")
print(iso.sub(r"\g<d>/\g<m>/\g<y>", "from 2024-01-02 to 2024-02-03"))
