import re
import unicodedata

def slugify(title, maxlen=40):
    s = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    s = re.sub(r"[^\w\s-]", "", s.lower())
    s = re.sub(r"[\s_-]+", "-", s).strip("-")
    return s[:maxlen].rstrip("-")

titles = ["Hello, World!", "  Café au lait — a guide  ", "Python 3.11: What's New?",
          "über_cool   STUFF", "100% Pure!!!", "A very long title that will definitely need truncation"]
seen = {}
for t in titles:
    slug = slugify(t)
    seen[slug] = seen.get(slug, 0) + 1
    print(f"{t!r:60} -> {slug}")
