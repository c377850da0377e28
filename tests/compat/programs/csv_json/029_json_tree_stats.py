import json

tree = json.loads("""
{"name": "root", "size": 0, "children": [
  {"name": "src", "size": 0, "children": [
    {"name": "main.py", "size": 1200}, {"name": "util.py", "size": 340}]},
  {"name": "README.md", "size": 800},
  {"name": "data", "size": 0, "children": [{"name": "x.csv", "size": 50000}]}
]}""")

def walk(node, depth=0):
    kids = node.get("children", [])
    total = node["size"] + sum(walk(k, depth + 1) for k in kids)
    print("  " * depth + f"{node['name']} ({total} bytes)" + ("/" if kids else ""))
    return total

total = walk(tree)
print("grand total:", total)
