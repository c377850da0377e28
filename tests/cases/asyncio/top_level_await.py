# sluice: answers = {"lookup": ["alpha", "beta"]}
# sluice: pending = [1, 1]
first = await lookup({"key": 1})
second = await lookup(key=2)
print(first, second)
