import asyncio
import json

def parse_payload(text):
    data = json.loads(text)
    return {k: v for k, v in data.items() if v is not None}

async def fetch(i):
    await asyncio.sleep(0.005)
    return json.dumps({"id": i, "name": f"item{i}", "discount": None if i % 2 else 0.1})

async def process(i):
    raw = await fetch(i)
    cleaned = parse_payload(raw)
    return cleaned

async def main():
    loop = asyncio.get_running_loop()
    results = await asyncio.gather(*(process(i) for i in range(4)))
    for r in results:
        print(r)
    fut = loop.create_future()
    loop.call_soon(fut.set_result, len(results))
    print("future result:", await fut)

asyncio.run(main())
