import re

trace = """Traceback (most recent call last):
  File "/app/main.py", line 42, in handle
    result = process(payload)
  File "/app/worker.py", line 17, in process
    return transform(data["items"])
  File "/app/transform.py", line 88, in transform
    total += item["price"] * item["qty"]
KeyError: 'qty'"""

frames = re.findall(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\w+)\n\s+(?P<code>.+)', trace)
for file, line, func, code in frames:
    print(f"{file.rsplit('/', 1)[-1]:14}:{line:>3} {func:10} | {code}")
exc = re.search(r"^(?P<type>\w+(?:Error|Exception)): (?P<msg>.*)$", trace, re.M)
print("exception:", exc["type"], "message:", exc["msg"])
print("deepest frame:", frames[-1][2])
