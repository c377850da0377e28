from dataclasses import dataclass, fields
from typing import Any

@dataclass
class Repo:
    name: str
    stars: int
    language: str | None = None
    archived: bool = False

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> "Repo":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

api_rows = [
    {"name": "fastlib", "stars": 1520, "language": "Rust", "owner": "x", "forks": 10},
    {"name": "old-tool", "stars": 88, "archived": True, "url": "..."},
    {"name": "webapp", "stars": 430, "language": "TypeScript"},
    {"name": "scripts", "stars": 12, "language": "Python"},
]
repos = [Repo.from_api(r) for r in api_rows]
active = sorted((r for r in repos if not r.archived), key=lambda r: r.stars, reverse=True)
for r in active:
    print(f"{r.name:<10} {r.stars:>6,} {r.language or '-'}")
print(repos[1])
print(sum(r.stars for r in repos), [r.name for r in repos if r.language is None])
