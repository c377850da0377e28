tree = {
    "name": "root",
    "children": [
        {"name": "src", "children": [
            {"name": "main.py", "size": 1200},
            {"name": "utils", "children": [{"name": "io.py", "size": 800}, {"name": "fmt.py", "size": 300}]},
        ]},
        {"name": "README.md", "size": 450},
        {"name": "tests", "children": [{"name": "test_main.py", "size": 950}]},
    ],
}

def walk(node, path=""):
    here = f"{path}/{node['name']}"
    if "children" in node:
        for child in node["children"]:
            yield from walk(child, here)
    else:
        yield here, node["size"]

files = list(walk(tree))
for path, size in files:
    print(f"{size:>6}  {path}")
print("total bytes:", sum(s for _, s in files))
print("python files:", sum(1 for p, _ in files if p.endswith(".py")))
