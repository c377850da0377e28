from collections import ChainMap

globals_ = {"x": 1, "len": "builtin"}
scopes = ChainMap(globals_)

def enter(**names):
    global scopes
    scopes = scopes.new_child(names)

def leave():
    global scopes
    scopes = scopes.parents

enter(x=10, y=20)
enter(y=30)
print("x, y:", scopes["x"], scopes["y"], "| depth:", len(scopes.maps))
leave()
print("after leave y:", scopes["y"])
leave()
print("top y:", scopes.get("y", "undefined"), "| x:", scopes["x"])
print("all keys:", sorted(ChainMap({"a": 1}, {"b": 2}, {"a": 3})))
