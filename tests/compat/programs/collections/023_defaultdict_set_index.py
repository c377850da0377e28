from collections import defaultdict

docs = {
    1: "fast json parser for python",
    2: "python csv tools",
    3: "rust json parser",
    4: "fast csv parser in rust",
}
index = defaultdict(set)
for doc_id, text in docs.items():
    for word in text.split():
        index[word].add(doc_id)

def search(*terms):
    sets = [index.get(t, set()) for t in terms]
    return sorted(set.intersection(*sets)) if sets else []

for q in [("parser",), ("fast", "parser"), ("python", "json"), ("go",)]:
    print(" ".join(q), "->", search(*q))
print("vocab size:", len(index))
