import asyncio

async def fetch(url):
    await asyncio.sleep(0.01)
    if "bad" in url:
        raise ConnectionError(f"refused: {url}")
    if "slow" in url:
        raise asyncio.TimeoutError()
    return {"url": url, "status": 200, "bytes": len(url) * 100}

async def main():
    urls = ["/a", "/bad-host", "/b", "/slow", "/c"]
    results = await asyncio.gather(*(fetch(u) for u in urls), return_exceptions=True)
    ok, failed = [], []
    for url, res in zip(urls, results):
        if isinstance(res, BaseException):
            failed.append((url, type(res).__name__, str(res)))
        else:
            ok.append(res)
    print("ok:", [r["url"] for r in ok], "bytes:", sum(r["bytes"] for r in ok))
    for url, name, msg in failed:
        print(f"failed {url}: {name} {msg!r}")

asyncio.run(main())
