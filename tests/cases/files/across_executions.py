# The tree is container state: later executions see it, a stopped one leaves no trace.
with open("kept.txt", "w") as f:
    f.write("written by the first execution\n")
log = open("log.txt", "a")
log.write("first\n")
# --- cell ---
import os
print(open("kept.txt").read().strip(), sorted(os.listdir(".")))
log.write("second\n")
log.flush()
print(open("log.txt").read().split())
# --- cell ---
# sluice: limits = {"time_ms": 300}
# sluice: stop = "execution_time_exceeded"
import os
os.remove("kept.txt")
with open("vanishes.txt", "w") as f:
    f.write("never kept")
while True:
    pass
# --- cell ---
import os
print(sorted(os.listdir(".")), open("kept.txt").read().strip())
