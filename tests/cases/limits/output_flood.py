# sluice: limits = {"max_output_bytes": 1000}
# sluice: stdout_contains = ["[sluice: stdout truncated,"]
for i in range(10000):
    print("line", i)
print("done")
