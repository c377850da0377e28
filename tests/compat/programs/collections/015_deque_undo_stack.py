from collections import deque

history = deque(maxlen=4)
doc = ""
for edit in ["Hello", ", ", "world", "!", " Bye", "."]:
    history.append(doc)
    doc += edit
    print(f"typed {edit!r:8} doc={doc!r}")

for _ in range(3):
    doc = history.pop()
    print("undo ->", repr(doc))
print("history left:", list(history))
print("can undo:", bool(history), "| depth:", len(history), "of", history.maxlen)
