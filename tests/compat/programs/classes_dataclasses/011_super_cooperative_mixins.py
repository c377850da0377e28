class Base:
    def to_dict(self) -> dict:
        return {}

class TimestampMixin(Base):
    def to_dict(self):
        d = super().to_dict()
        d["created"] = self.created
        return d

class TagsMixin(Base):
    def to_dict(self):
        d = super().to_dict()
        d["tags"] = sorted(self.tags)
        return d

class Document(TimestampMixin, TagsMixin):
    def __init__(self, title, created, tags):
        self.title, self.created, self.tags = title, created, tags

    def to_dict(self):
        d = super().to_dict()
        d["title"] = self.title
        return d

docs = [Document("Q1 report", "2024-04-01", {"finance", "quarterly"}),
        Document("Roadmap", "2024-01-15", {"planning"})]
for doc in docs:
    print(doc.to_dict())
print(" -> ".join(c.__name__ for c in Document.__mro__))
