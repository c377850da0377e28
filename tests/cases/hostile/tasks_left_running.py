import asyncio
async def forever():
    while True:
        await asyncio.sleep(1)
background = asyncio.create_task(forever())
await asyncio.sleep(0)
print("main finished; leftover tasks are cancelled")
# --- cell ---
print(background.cancelled())
