# sluice: stdout_contains = ["True"]
# The classic escape: walk object's subclasses for something that reaches the host.
found = []
for cls in ().__class__.__base__.__subclasses__():
    name = cls.__name__
    if name in ("Popen", "_wrap_close", "FileIO", "BuiltinImporter", "SourceFileLoader"):
        found.append(name)
outcomes = []
for cls in ().__class__.__base__.__subclasses__():
    try:
        if cls.__name__ == "Popen":
            cls(["/bin/sh", "-c", "id"])
            outcomes.append("Popen LEAKED")
        elif cls.__name__ == "FileIO":
            cls("/etc/passwd").read()
            outcomes.append("FileIO LEAKED")
        elif cls.__name__ == "_wrap_close":
            cls.__init__.__globals__["system"]("id") == 0 or 1 / 0
            outcomes.append("os.system LEAKED")
    except BaseException:
        outcomes.append(cls.__name__ + " blocked")
print(sorted(set(outcomes)))
print(all(o.endswith("blocked") for o in outcomes))
