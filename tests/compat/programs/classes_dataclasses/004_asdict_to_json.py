import json
from dataclasses import dataclass, asdict, astuple, field

@dataclass
class Address:
    street: str
    city: str
    zip_code: str

@dataclass
class User:
    id: int
    name: str
    address: Address
    roles: list[str] = field(default_factory=lambda: ["viewer"])

users = [
    User(1, "Dana", Address("1 Main St", "Springfield", "11111"), ["admin"]),
    User(2, "Eli", Address("22 Oak Ave", "Shelbyville", "22222")),
]
payload = [asdict(u) for u in users]
print(json.dumps(payload, indent=2, sort_keys=True))
print(astuple(users[1]))
print(asdict(users[0])["address"]["city"])
