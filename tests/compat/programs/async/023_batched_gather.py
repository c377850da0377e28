import asyncio

async def fetch(i):
    await asyncio.sleep(0.005)
    return {"id": i, "ok": i % 7 != 0}

async def main():
    ids = list(range(1, 23))
    batch_size = 8
    all_results = []
    for start in range(0, len(ids), batch_size):
        batch = ids[start:start + batch_size]
        res = await asyncio.gather(*(fetch(i) for i in batch))
        all_results.extend(res)
        print(f"batch {start // batch_size + 1}: ids {batch[0]}-{batch[-1]}, ok={sum(r['ok'] for r in res)}")
    failed = [r["id"] for r in all_results if not r["ok"]]
    print("failed ids:", failed)
    print("success rate:", f"{1 - len(failed) / len(all_results):.1%}")

asyncio.run(main())
