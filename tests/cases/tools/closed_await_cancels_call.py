# sluice: answers = {"fetch": ["first"]}
# sluice: calls = ["fetch"]
# An await thrown into or closed while its call waits no longer wants the call: it is
# cancelled and never reaches the host, so the one answer goes to the next call.
call = fetch({})
waiting = call.__await__()
future = waiting.send(None)
waiting.close()
print(future.cancelled())
print(await fetch({}))
