# sluice: answers = {"lookup": "x"}
# sluice: pending = [3]
import asyncio

async def main():
    values = await asyncio.gather(lookup({"i": 1}), lookup({"i": 2}), lookup({"i": 3}))
    return "".join(values)

if __name__ == "__main__":
    result = asyncio.run(main())
    print(result)
