# sluice: limits = {"max_output_bytes": 10000}
# sluice: stdout_contains = ["[sluice: stdout truncated"]
# sluice: stderr_contains = ["[sluice: stderr truncated"]
import sys
sys.stdout.write("x" * 50_000_000)
sys.stderr.write("y" * 50_000_000)
print()
