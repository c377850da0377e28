# sluice: stdout_contains = ["after"]
import sys
print("lone surrogate:", "\ud800".encode("utf-8", "surrogatepass"))
sys.stdout.write("\udcff\n")
print("after")
