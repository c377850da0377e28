# sluice: answers = {"lookup": "ok"}
import sluice
try:
    await lookup({"blob": "x" * (2 << 20)})
except sluice.ToolInputError as e:
    print("refused:", e.code)
print(await lookup({"small": 1}))
