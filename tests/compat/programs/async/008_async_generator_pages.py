import asyncio

async def fetch_page(cursor):
    await asyncio.sleep(0.005)
    data = list(range(cursor, min(cursor + 4, 14)))
    next_cursor = cursor + 4 if cursor + 4 < 14 else None
    return {"data": data, "next": next_cursor}

async def paginate():
    cursor = 0
    while cursor is not None:
        page = await fetch_page(cursor)
        for item in page["data"]:
            yield item
        cursor = page["next"]

async def main():
    items = []
    async for item in paginate():
        items.append(item)
    print("items:", items)
    evens = [i async for i in paginate() if i % 2 == 0]
    print("evens:", evens)
    print("count:", len(items), "sum:", sum(items))

asyncio.run(main())
