# Each cell that awaits runs on a loop of its own, in the state a new loop starts in, whatever
# the cell before did to its loop; a task a cell leaves pending is cancelled when it ends,
# also when its main task ended without ever waiting.
import asyncio

loop = asyncio.get_running_loop()
print("debug:", loop.get_debug(), "closed:", loop.is_closed(), "running:", loop.is_running())
loop.set_debug(True)
print("debug now:", loop.get_debug())


async def forever():
    await asyncio.Event().wait()


left = asyncio.create_task(forever())
await asyncio.sleep(0)
print("pending:", not left.done())
# --- cell ---
import asyncio

print("left cancelled:", left.cancelled())
here = asyncio.get_running_loop()
print("same loop:", here is loop, "debug:", here.get_debug(), "task:", asyncio.current_task() is not None)
unstarted = asyncio.create_task(forever())
# An `await` never reached: the cell runs as a task that ends in its first step, eagerly.
await asyncio.sleep(0) if False else None
# --- cell ---
print("unstarted task cancelled:", unstarted.cancelled())
