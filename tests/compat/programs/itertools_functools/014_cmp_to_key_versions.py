from functools import cmp_to_key

versions = ["1.10.0", "1.2.9", "1.2.10", "2.0.0-rc1", "2.0.0", "0.9", "1.2"]

def parse(v):
    base, _, pre = v.partition("-")
    return [int(p) for p in base.split(".")], pre

def compare(a, b):
    (na, pa), (nb, pb) = parse(a), parse(b)
    width = max(len(na), len(nb))
    na += [0] * (width - len(na))
    nb += [0] * (width - len(nb))
    if na != nb:
        return -1 if na < nb else 1
    if pa == pb:
        return 0
    return 1 if not pa else -1 if not pb else (-1 if pa < pb else 1)

print(sorted(versions, key=cmp_to_key(compare)))
print("latest:", max(versions, key=cmp_to_key(compare)))
