from collections import Counter
import re

text = """The service returned an error. The error was a timeout.
Retrying the request fixed the timeout, but the logs show the error again."""
stop = {"the", "a", "an", "was", "but"}
words = [w for w in re.findall(r"[a-z']+", text.lower()) if w not in stop]
freq = Counter(words)
for word, n in sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[:5]:
    print(f"{word:10} {'#' * n} {n}")
print("unique words:", len(freq))
print("letters:", Counter(c for c in text.lower() if c.isalpha()).most_common(3))
