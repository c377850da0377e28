# sluice: answers = {"lookup": "ok"}
import builtins
del lookup
builtins.print = None
# --- cell ---
# sluice: answers = {"lookup": "ok"}
import builtins
try:
    print("print is gone")
except TypeError:
    import sys
    sys.stdout.write("print is gone, tools come back: ")
sys.stdout.write(await lookup({}) + "\n")
