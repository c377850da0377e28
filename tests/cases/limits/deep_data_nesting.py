# sluice: stop = "stack_limit_exceeded"
import json
nested = []
for _ in range(200000):
    nested = [nested]
print("built")
json.dumps(nested)
