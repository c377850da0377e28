"""Where a script's output goes: stdout and stderr straight to the host's bounded captures,
and tracebacks without the runtime's own frames."""

import io
import traceback

import _sluice_abi

# Code of the runtime modules carries this file name prefix (see the guest's loader).
RUNTIME_PREFIX = "<sluice:"


class _HostStream(io.TextIOBase):
    """sys.stdout / sys.stderr: every write goes straight to the host's bounded capture."""

    def __init__(self, fd, name):
        self._fd = fd
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def encoding(self):
        return "utf-8"

    @property
    def errors(self):
        return "strict"

    def writable(self):
        return True

    def isatty(self):
        return False

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not " + type(text).__name__)
        if text:
            _sluice_abi.write(self._fd, text)
        return len(text)

    def flush(self):
        pass


STDOUT = _HostStream(1, "<stdout>")
STDERR = _HostStream(2, "<stderr>")


def format_exception(exc):
    """A traceback without the runtime's own frames."""
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
    seen = set()
    todo = [te]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        kept = [f for f in item.stack if not f.filename.startswith(RUNTIME_PREFIX)]
        item.stack = traceback.StackSummary.from_list(kept)
        todo.extend(x for x in (item.__cause__, item.__context__) if x is not None)
        todo.extend(getattr(item, "exceptions", None) or ())
    return "".join(te.format())
