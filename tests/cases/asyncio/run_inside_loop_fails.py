# sluice: return_code = 1
# sluice: stderr_contains = ["cannot be called from a running event loop"]
import asyncio

async def inner():
    return 1

async def outer():
    return asyncio.run(inner())

await outer()
