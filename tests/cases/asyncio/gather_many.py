# sluice: answers = {"square": "ok"}
# sluice: pending = [500]
import asyncio
results = await asyncio.gather(*(square({"n": i}) for i in range(500)))
print(len(results), set(results))
