from dataclasses import dataclass
from typing import Generic, TypeVar, Callable, Optional

T = TypeVar("T")

class Repository(Generic[T]):
    def __init__(self, key: Callable[[T], int]):
        self._items: dict[int, T] = {}
        self._key = key

    def add(self, item: T) -> None:
        self._items[self._key(item)] = item

    def get(self, item_id: int) -> Optional[T]:
        return self._items.get(item_id)

    def find(self, pred: Callable[[T], bool]) -> list[T]:
        return [i for _, i in sorted(self._items.items()) if pred(i)]

@dataclass
class Task:
    id: int
    title: str
    done: bool = False

repo: Repository[Task] = Repository(key=lambda t: t.id)
for i, title in enumerate(["write tests", "fix bug", "deploy", "update docs"], start=1):
    repo.add(Task(i, title, done=i % 2 == 0))
print(repo.get(3))
print(repo.get(99))
print([t.title for t in repo.find(lambda t: not t.done)])
print(len(repo.find(lambda t: "d" in t.title)))
