import re
from collections import Counter

doc = """Dr. Smith arrived at 9 a.m. The patient was stable! Was the data logged?
Yes. The logs show 3 events... Everything else looked normal."""
sentences = [s for s in re.split(r"(?<!\bDr\.)(?<=[.!?])\s+(?=[A-Z])", doc.replace("\n", " ")) if s]
for i, s in enumerate(sentences, 1):
    words = re.findall(r"\b\w+\b", s)
    print(f"{i}: ({len(words):2d} words) {s}")
vowels = Counter(c for c in doc.lower() if c in "aeiou")
print("vowels:", sorted(vowels.items()))
print("longest word:", max(re.findall(r"[A-Za-z]+", doc), key=len))
