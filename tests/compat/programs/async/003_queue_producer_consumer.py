import asyncio

async def producer(queue, orders):
    for order in orders:
        await queue.put(order)
        await asyncio.sleep(0)
    for _ in range(2):
        await queue.put(None)

async def consumer(name, queue, processed):
    while True:
        order = await queue.get()
        if order is None:
            queue.task_done()
            break
        await asyncio.sleep(0.005)
        processed.append((order["id"], name, order["qty"] * order["price"]))
        queue.task_done()

async def main():
    orders = [{"id": i, "qty": i % 4 + 1, "price": 2.5 * i} for i in range(1, 9)]
    queue = asyncio.Queue(maxsize=3)
    processed = []
    workers = [asyncio.create_task(consumer(f"w{n}", queue, processed)) for n in (1, 2)]
    await producer(queue, orders)
    await queue.join()
    await asyncio.gather(*workers)
    for oid, _, total in sorted(processed):
        print(f"order {oid}: {total:.2f}")
    print("workers used:", sorted({w for _, w, _ in processed}))
    print("grand total:", sum(t for *_, t in processed))

asyncio.run(main())
