from contextlib import suppress

config = {"timeout": "30", "retries": "three", "debug": "true"}
settings = {"timeout": 10, "retries": 3, "verbose": False}

for key in ["timeout", "retries", "verbose"]:
    with suppress(KeyError, ValueError):
        settings[key] = int(config[key])
print(settings)

cache = {"a": 1}
with suppress(KeyError):
    del cache["zzz"]
    print("not printed")
print("cache intact:", cache)

items = [3, 0, 5]
results = []
for x in items:
    with suppress(ZeroDivisionError):
        results.append(round(15 / x, 2))
print("results:", results)
