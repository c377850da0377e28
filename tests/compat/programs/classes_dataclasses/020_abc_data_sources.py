from abc import ABC, abstractmethod

class DataSource(ABC):
    def __init__(self, name):
        self.name = name

    @abstractmethod
    def fetch(self) -> list[dict]:
        ...

    def count(self) -> int:
        return len(self.fetch())

class StaticSource(DataSource):
    def __init__(self, name, rows):
        super().__init__(name)
        self.rows = rows

    def fetch(self):
        return list(self.rows)

class CsvTextSource(DataSource):
    def __init__(self, name, text):
        super().__init__(name)
        self.text = text

    def fetch(self):
        header, *lines = self.text.strip().splitlines()
        keys = header.split(",")
        return [dict(zip(keys, l.split(","))) for l in lines]

sources = [StaticSource("static", [{"a": 1}, {"a": 2}]), CsvTextSource("csv", "id,name\n1,x\n2,y\n3,z")]
for src in sources:
    print(src.name, src.count(), src.fetch()[-1])
try:
    DataSource("abstract")
except TypeError as e:
    print("TypeError:", "abstract" in str(e))
