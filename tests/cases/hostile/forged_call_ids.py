# sluice: answers = {"lookup": "ok"}
# sluice: stop = "guest_fault"
import asyncio
import _sluice_runtime as rt
first = await lookup({})
# Reuse a sequence number the host already answered: the host refuses to be confused.
rt._calls.next_seq = 0
await lookup({})
