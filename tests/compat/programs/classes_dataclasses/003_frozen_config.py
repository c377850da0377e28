from dataclasses import dataclass, replace, FrozenInstanceError

@dataclass(frozen=True)
class DbConfig:
    host: str = "localhost"
    port: int = 5432
    pool_size: int = 5
    readonly: bool = False

base = DbConfig()
replica = replace(base, host="replica.internal", readonly=True)
big = replace(base, pool_size=20)

for cfg in (base, replica, big):
    print(cfg)

try:
    base.port = 6543
except FrozenInstanceError as e:
    print("Cannot modify:", type(e).__name__, "-", e)

lookup = {base: "primary", replica: "read-only"}
print(lookup[DbConfig()])
print(len({base, DbConfig(), replica}))
