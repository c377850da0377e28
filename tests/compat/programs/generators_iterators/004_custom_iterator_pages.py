class Paginator:
    """Iterates over pages of an API result held in memory."""

    def __init__(self, items, page_size):
        self.items = items
        self.page_size = page_size
        self.page = 0

    def __iter__(self):
        return self

    def __next__(self):
        start = self.page * self.page_size
        if start >= len(self.items):
            raise StopIteration
        self.page += 1
        return {"page": self.page, "results": self.items[start:start + self.page_size],
                "has_more": start + self.page_size < len(self.items)}

products = [f"prod-{i:03d}" for i in range(1, 12)]
for page in Paginator(products, 4):
    print(page["page"], page["results"], "more" if page["has_more"] else "end")

p = Paginator(products, 5)
print(next(p)["results"][-1], next(p)["page"], sum(1 for _ in p))
print(next(p, "exhausted"))
