from dataclasses import dataclass, field

@dataclass(order=True)
class Release:
    major: int
    minor: int
    patch: int
    name: str = field(compare=False, default="")

    @classmethod
    def parse(cls, text: str, name: str = "") -> "Release":
        major, minor, patch = (int(p) for p in text.lstrip("v").split("."))
        return cls(major, minor, patch, name)

    def __str__(self):
        return f"v{self.major}.{self.minor}.{self.patch}"

tags = ["v1.10.0", "v1.2.3", "v2.0.0", "v1.2.10", "v0.9.9"]
releases = sorted(Release.parse(t, name=f"build-{i}") for i, t in enumerate(tags))
print("Sorted:", ", ".join(str(r) for r in releases))
print("Latest:", max(releases), "->", max(releases).name)
print(Release(1, 2, 3, "a") == Release(1, 2, 3, "b"))
print(Release.parse("1.2.3") < Release.parse("1.10.0"))
