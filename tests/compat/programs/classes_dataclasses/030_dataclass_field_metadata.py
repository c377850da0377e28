from dataclasses import dataclass, field, fields, asdict

@dataclass
class Listing:
    title: str = field(metadata={"label": "Title", "width": 18})
    city: str = field(metadata={"label": "City", "width": 10})
    price: int = field(metadata={"label": "Price", "width": 9, "fmt": ",d"})
    sqft: int = field(default=0, metadata={"label": "Sq ft", "width": 7})
    internal_note: str = field(default="", repr=False, metadata={"hidden": True})

listings = [
    Listing("Sunny 2BR condo", "Austin", 425000, 1100, "motivated seller"),
    Listing("Loft downtown", "Denver", 610000, 950),
    Listing("Family home", "Raleigh", 389900, 2200),
]
visible = [f for f in fields(Listing) if not f.metadata.get("hidden")]
print("".join(f.metadata["label"].ljust(f.metadata["width"]) for f in visible))
for item in sorted(listings, key=lambda l: l.price):
    row = asdict(item)
    print("".join(format(row[f.name], f.metadata.get("fmt", "")).ljust(f.metadata["width"]) for f in visible))
print(listings[0])
