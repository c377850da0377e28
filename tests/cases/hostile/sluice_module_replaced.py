# sluice: answers = {"lookup": "ok"}
import sys
sys.modules["sluice"] = None
print(await lookup({}))
