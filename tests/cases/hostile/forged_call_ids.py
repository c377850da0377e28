# sluice: answers = {"lookup": ["first", "second"]}
# sluice: calls = ["lookup", "lookup"]
import asyncio
import _sluice_runtime as rt
first = await lookup({})
# The guest's call numbers are only tokens to match results: the host numbers calls itself,
# so a reused or huge number confuses nothing and rewrites no ledger entry.
rt._calls.next_seq = 0
second = await lookup({})
rt._calls.next_seq = 2**64 - 1
print(first, second)
