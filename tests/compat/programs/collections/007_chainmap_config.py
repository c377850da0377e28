from collections import ChainMap

defaults = {"host": "localhost", "port": 5432, "debug": False, "pool": 5}
file_cfg = {"host": "db.internal", "pool": 20}
cli_args = {"debug": True}

cfg = ChainMap(cli_args, file_cfg, defaults)
for key in sorted(cfg):
    source = next(i for i, m in enumerate(cfg.maps) if key in m)
    print(f"{key:6} = {cfg[key]!r:15} (layer {source})")

child = cfg.new_child({"port": 6543})
print("child port:", child["port"], "parent port:", cfg["port"])
child["timeout"] = 30
print("first map after write:", child.maps[0])
print("parents is cfg:", child.parents.maps == cfg.maps)
