import asyncio

results = await asyncio.gather(*[get({"i": i}) for i in range(100)])
print(sum(int(r) for r in results))
