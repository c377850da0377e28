from typing import Protocol, runtime_checkable
import io, json

@runtime_checkable
class Exporter(Protocol):
    def export(self, rows: list[dict]) -> str: ...

class CsvExporter:
    def export(self, rows):
        cols = list(rows[0])
        lines = [",".join(cols)] + [",".join(str(r[c]) for c in cols) for r in rows]
        return "\n".join(lines)

class JsonExporter:
    def export(self, rows):
        return json.dumps(rows, separators=(",", ":"))

class NotAnExporter:
    def dump(self, rows):
        return ""

rows = [{"id": 1, "city": "Oslo", "temp": -3.5}, {"id": 2, "city": "Lima", "temp": 19.0}]
for exp in (CsvExporter(), JsonExporter(), NotAnExporter()):
    name = type(exp).__name__
    if isinstance(exp, Exporter):
        print(f"--- {name}\n{exp.export(rows)}")
    else:
        print(f"--- {name} skipped (no export method)")
