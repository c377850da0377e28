# sluice: answers = {"lookup": "ok"}
# sluice: stop = "guest_fault"
import _sluice_runtime as rt
# Break the event loop from inside: the execution fails and is rolled back.
rt.SluiceLoop.call_soon = lambda *a, **k: 1 / 0
await lookup({})
# --- cell ---
print(await lookup({}), "- the loop is whole again")
