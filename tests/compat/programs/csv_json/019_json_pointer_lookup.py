import json

config = json.loads("""{
  "services": {
    "api": {"port": 8080, "replicas": 3, "env": ["PROD", "EU"]},
    "worker": {"port": null, "replicas": 5, "env": []}
  },
  "version": 2
}""")

def get_path(doc, path, default=None):
    cur = doc
    for part in path.split("/"):
        if isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return default
    return cur

for p in ["services/api/port", "services/api/env/1", "services/worker/port",
          "services/db/port", "version", "services/worker/env/0"]:
    print(f"{p:24} -> {json.dumps(get_path(doc=config, path=p, default='<missing>'))}")
