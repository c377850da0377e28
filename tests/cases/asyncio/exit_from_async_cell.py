# sluice: return_code = 4
# A cell that never waits runs as a task started at once: it still runs as a task, in a
# running loop, and `sys.exit` there ends the execution with its code.
import asyncio
import sys
print("task:", asyncio.current_task() is not None, "running:", asyncio.get_running_loop().is_running())
started = asyncio.create_task(asyncio.sleep(0))
sys.exit(4)
await asyncio.sleep(0)
# --- cell ---
# sluice: return_code = 5
# `sys.exit` in another task after a wait: the execution ends with its code, and the main
# task and what else is pending are cancelled and unwind.
import asyncio
import sys


async def quitter():
    await asyncio.sleep(0)
    sys.exit(5)


async def waiter():
    try:
        await asyncio.sleep(10)
    finally:
        print("waiter unwound")


q = asyncio.create_task(quitter())
w = asyncio.create_task(waiter())
try:
    await asyncio.sleep(1)
finally:
    print("main unwound")
# --- cell ---
# sluice: return_code = 1
# sluice: stderr_contains = ["KeyboardInterrupt"]
import asyncio
await asyncio.sleep(0)
raise KeyboardInterrupt
# --- cell ---
# A task the last cell created and never awaited was cancelled before it ran; the container
# goes on.
import asyncio
print("started task cancelled:", started.cancelled())
await asyncio.sleep(0)
print("still serving")
