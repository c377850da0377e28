# sluice: limits = {"time_ms": 1500, "memory_bytes": 268435456}
# sluice: stop_any = ["execution_time_exceeded", "memory_limit_exceeded"]
import asyncio
async def bomb():
    asyncio.create_task(bomb())
    asyncio.create_task(bomb())
    await asyncio.sleep(0)
await bomb()
await asyncio.sleep(3600)
