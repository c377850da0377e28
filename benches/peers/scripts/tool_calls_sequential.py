total = 0
for i in range(10000):
    total += int(await get({"i": i}))
print(total)
