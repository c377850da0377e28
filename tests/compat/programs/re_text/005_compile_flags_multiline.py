import re

config = """# database
HOST = db.local
port=5432
  User =  admin
# cache
ttl = 300
Debug = TRUE
"""
kv = re.compile(r"""
    ^\s*(?P<key>[a-z_]+)   # key at line start
    \s*=\s*
    (?P<value>.+?)\s*$      # value to line end
""", re.MULTILINE | re.IGNORECASE | re.VERBOSE)
settings = {m["key"].lower(): m["value"] for m in kv.finditer(config)}
for k, v in settings.items():
    print(f"{k:6} = {v!r}")
print("comments:", re.findall(r"^#\s*(.*)$", config, re.M))
print("dotall:", re.search(r"HOST.*ttl", config, re.S) is not None, re.search(r"HOST.*ttl", config) is not None)
