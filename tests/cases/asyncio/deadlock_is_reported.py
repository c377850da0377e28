# sluice: return_code = 1
# sluice: stderr_contains = ["deadlock"]
import asyncio
event = asyncio.Event()
print("waiting forever")
await event.wait()
