import asyncio

async def stage(name, inbox, outbox, fn):
    while (item := await inbox.get()) is not None:
        await asyncio.sleep(0)
        await outbox.put(fn(item))
    await outbox.put(None)

async def main():
    raw, parsed, enriched = asyncio.Queue(), asyncio.Queue(), asyncio.Queue()
    lines = ["alice,34", "bob,27", "carol,41", "dan,19"]
    workers = [
        asyncio.create_task(stage("parse", raw, parsed, lambda l: dict(zip(("name", "age"), l.split(","))))),
        asyncio.create_task(stage("enrich", parsed, enriched,
                                  lambda r: {**r, "age": int(r["age"]), "adult": int(r["age"]) >= 21})),
    ]
    for l in lines + [None]:
        await raw.put(l)
    out = []
    while (r := await enriched.get()) is not None:
        out.append(r)
    await asyncio.gather(*workers)
    for r in out:
        print(r)
    print("adults:", [r["name"] for r in out if r["adult"]])

asyncio.run(main())
