from enum import Flag, auto

class Perm(Flag):
    READ = auto()
    WRITE = auto()
    DELETE = auto()
    ADMIN = READ | WRITE | DELETE

roles = {
    "viewer": Perm.READ,
    "editor": Perm.READ | Perm.WRITE,
    "owner": Perm.ADMIN,
}

def names(p: Perm) -> list[str]:
    return [m.name for m in Perm if m in p and m is not Perm.ADMIN and m.name]

for role, perm in roles.items():
    print(f"{role:<7} value={perm.value} can_delete={Perm.DELETE in perm} perms={names(perm)}")

combined = roles["viewer"] | roles["editor"]
print(combined == roles["editor"], bool(roles["viewer"] & Perm.WRITE))
print((Perm.ADMIN & ~Perm.DELETE) == (Perm.READ | Perm.WRITE))
