class PipelineError(Exception):
    """Base error for the pipeline."""

class ExtractError(PipelineError):
    pass

class SchemaError(ExtractError):
    def __init__(self, column, expected):
        super().__init__(f"column {column!r} expected {expected}")
        self.column = column

def run(stage):
    if stage == "schema":
        raise SchemaError("price", "float")
    if stage == "extract":
        raise ExtractError("source unreachable")
    if stage == "load":
        raise PipelineError("target locked")
    if stage == "other":
        raise LookupError("unexpected")
    return "ok"

for stage in ["schema", "extract", "load", "other", "fine"]:
    try:
        outcome = run(stage)
    except SchemaError as e:
        outcome = f"schema problem in {e.column}: {e}"
    except ExtractError as e:
        outcome = f"extract failed: {e}"
    except PipelineError as e:
        outcome = f"generic pipeline error: {e}"
    except Exception as e:
        outcome = f"unexpected {type(e).__name__}: {e}"
    print(f"{stage:<7} {outcome}")
print([c.__name__ for c in SchemaError.__mro__[:4]])
