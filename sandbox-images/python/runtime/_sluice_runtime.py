"""The guest side of an execution: the entry the host calls (see ../README.md).

The host sends {"op": "execute" | "resume", ...} and gets back {"kind": "done" | "pending" |
"fault", ...}. An `execute` runs in the guest's native cell runner (`src/cell.rs`), which calls
the functions `_cell_hooks` hands it for what a cell needs of Python; `dispatch(request)` takes
the rest (`resume`). When every task waits on a tool, the answer is a "pending" frame: no native
frame is left behind, so the paused coroutines live in linear memory until the host resumes
them with results.

The work is split by concern: `_sluice_output` (stdout, stderr, tracebacks), `_sluice_calls`
(the call table), `_sluice_loop` (the event loop), `_sluice_tools` (tool functions),
`_sluice_cells` (compiling a cell), `_sluice_fs` (the container's files). This module runs
cells and prepares the image.
"""

import asyncio
import binascii
import gc
import os
import sys

import _sluice_abi
import _sluice_fs
import _sluice_imports
import sluice
from _sluice_calls import calls as _calls
from _sluice_cells import compile_declined, forget_sources, remember_source
from _sluice_loop import Deadlock, Policy, SluiceLoop, cancel_leftovers, run
from _sluice_output import STDERR, STDOUT, format_exception
from _sluice_tools import bind_tools, bound_tools, gather
from asyncio import events, tasks
from inspect import CO_COROUTINE

# Python's own recursion limit; sized so RecursionError comes before the wasm stack ends.
DEFAULT_RECURSION_LIMIT = 1000
MAX_RECURSION_LIMIT = 2000
# Longest `repr` of a trailing expression returned; the rest is cut with a marker.
MAX_REPR_CHARS = 100_000
# Seed of a `random.Random` given none, from the container's stream: 256 bits.
RANDOM_SEED_BYTES = 32
# Net new container objects before a young collection. RustPython's 2,000 made a script that
# replaces 1,000 decoded records per execution pay a collection (a scan of every young object,
# and an emptied method cache) every other execution; objects freed while young never count.
YOUNG_GC_THRESHOLD = 20_000


class _Execution:
    """A cell that awaits: its event loop and main task, kept while it waits for the host."""

    __slots__ = ("loop", "main")

    def __init__(self):
        self.main = None
        self.loop = None


_execution = None
# `builtins.eval` as the image has it, as the native cell runner holds it: a script that
# replaces the builtin does not change how its next cell runs.
_eval = eval


def _done(value=None, exc=None):
    """The frame that ends an execution. Every cell ends here, so what is usually empty (its
    counts, the files it wrote) costs a test, not a copy."""
    global _execution
    counts = sluice._counts
    frame = {"kind": "done", "return_code": 0, "value_repr": None, "error": None, "counts": dict(counts) if counts else {}}
    if exc is not None:
        if isinstance(exc, SystemExit):
            frame["return_code"] = _exit_code(exc)
        else:
            text = format_exception(exc)
            STDERR.write(text)
            frame["return_code"] = 1
            frame["error"] = {"type": type(exc).__name__, "message": str(exc), "traceback": text}
    elif value is not None:
        try:
            text = repr(value)
        except BaseException as repr_exc:  # noqa: B036 - a broken __repr__ is the script's error
            return _done(exc=repr_exc)
        if len(text) > MAX_REPR_CHARS:
            text = text[:MAX_REPR_CHARS] + f"... [sluice: repr truncated, {len(text) - MAX_REPR_CHARS} more characters]"
        frame["value_repr"] = text
    frame["files"] = _output_files() if _sluice_fs.fs.changed or _sluice_fs.open_writers.data else []
    _execution = None
    return frame


def _output_files():
    """The files this execution created or changed in the working directory, for the host."""
    _sluice_fs.flush_open_files()
    files, more = _sluice_fs.fs.outputs()
    if more:
        STDERR.write(f"[sluice: {more} more changed files are not returned; at most {len(files)} are]\n")
    return [[path, binascii.b2a_base64(data, newline=False).decode("ascii")] for path, data in files]


def _exit_code(exc):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    STDERR.write(str(code) + "\n")
    return 1


async def _run_cell(body, expr, namespace):
    result = _eval(body, namespace)
    if body.co_flags & CO_COROUTINE:
        result = await result
    if expr is None:
        return result
    value = _eval(expr, namespace)
    if expr.co_flags & CO_COROUTINE:
        value = await value
    return value


def _finish_async(execution):
    """The main task is done: cancel what it left running, then report its outcome."""
    loop, main = execution.loop, execution.main
    cancel_leftovers(loop)
    if main.cancelled():
        return _done(exc=asyncio.CancelledError("the script's main task was cancelled"))
    exc = main.exception()
    return _done(exc=exc) if exc is not None else _done(value=main.result())


def _abandon(execution, exc):
    """Ends an execution whose loop cannot go on: every task is cancelled, `exc` reported.
    The main task is None when its own first step raised `exc` out of `start_now`."""
    if execution.main is not None:
        execution.main.cancel()
    cancel_leftovers(execution.loop)
    return _done(exc=exc)


def _step(execution):
    try:
        frame = execution.loop.drive(execution.main.done)
    except Deadlock:
        return _abandon(execution, RuntimeError("every task is waiting and nothing can wake it (deadlock)"))
    except (SystemExit, KeyboardInterrupt) as exc:
        # A task's step stores these and raises them on through the loop, as asyncio.run
        # lets them end the program: here they end the execution, from whichever task.
        return _abandon(execution, exc)
    if frame is not None:
        return frame
    return _finish_async(execution)


def _start_files(files):
    """Places the files of a cell's request before it runs; a frame that ends the cell when
    they cannot be placed, else None."""
    try:
        _sluice_fs.place_all(files)
    except (OSError, ValueError, binascii.Error) as exc:
        return _done(exc=exc)
    return None


def _start_awaiting(body, expr, namespace):
    """Runs a cell that awaits: its main task starts at once, and the cell pauses for the host
    when every task waits on a tool."""
    global _execution
    execution = _Execution()
    loop = execution.loop = SluiceLoop()
    # The usual cell compiles to one coroutine that returns its last expression's value:
    # that coroutine is the main task's own, without `_run_cell`'s frame around it.
    if expr is None and body.co_flags & CO_COROUTINE:
        try:
            main = _eval(body, namespace)  # makes the coroutine; none of the cell runs yet
        except BaseException as exc:  # noqa: B036 - reported as the cell's, as a plain cell's is
            return _done(exc=exc)
    else:
        main = _run_cell(body, expr, namespace)
    try:
        execution.main = loop.start_now(main)
    except (SystemExit, KeyboardInterrupt) as exc:
        return _abandon(execution, exc)
    if execution.main.done():
        # It ended without waiting; what it started is cancelled, as after a round of `drive`.
        return _finish_async(execution)
    _execution = execution
    return _step(execution)


def _cell_hooks():
    """What the guest's native cell runner (`src/cell.rs`) reads and calls. It runs each
    `execute` request: the steps every cell takes natively, then the functions here for what
    a cell needs of them (tools to bind, files to place, an `await`, a value, an error)."""
    return {
        "runtime": globals(),
        "sluice": sluice,
        "stdout": STDOUT,
        "stderr": STDERR,
        "calls": _calls,
        "bound_tools": bound_tools,
        "bind_tools": bind_tools,
        "remember_source": remember_source,
        "compile_declined": compile_declined,
        "fs": _sluice_fs.fs,
        "open_writers": _sluice_fs.open_writers,
        "start_files": _start_files,
        "start_awaiting": _start_awaiting,
        "done": _done,
    }


def _resume(request):
    if _execution is None:
        return {"kind": "fault", "message": "no execution is waiting for results"}
    _calls.apply(request.get("results") or [])
    try:
        _sluice_fs.place_all(request.get("files"))
    except (OSError, ValueError, binascii.Error) as exc:
        # The files could not be placed: the script ends with why, as it would at its start.
        return _abandon(_execution, exc)
    return _step(_execution)


def dispatch(request):
    """Every request but `execute`, which the guest runs natively (`_cell_hooks`)."""
    op = request.get("op")
    if op == "resume":
        return _resume(request)
    return {"kind": "fault", "message": f"unknown op {op!r}"}


# -- pre-initialization ----------------------------------------------------------------------
def _clamped_setrecursionlimit(original):
    def setrecursionlimit(limit):
        original(min(int(limit), MAX_RECURSION_LIMIT))

    setrecursionlimit.__doc__ = original.__doc__
    return setrecursionlimit


_WARM_UP_CELLS = (
    "a = 1",
    "b = [a, a + 1]\ndef f(x):\n    return x * 2\nf(b[1])",
    "import json\ns = json.dumps({'b': b})\nlen(s)",
    "import asyncio\nasync def g():\n    await asyncio.sleep(0)\n    return 1\nawait g()",
)


def _warm_up():
    """Runs a few typical cells before the snapshot so that what they initialize lazily is
    in the image, then forgets them: containers start as if nothing had run."""
    warm = type(sys)("__main__")
    warm.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = warm
    for cell in _WARM_UP_CELLS:
        frame = _sluice_abi.execute_cell({"op": "execute", "code": cell, "tools": []})
        if frame.get("kind") != "done" or frame.get("return_code") != 0:
            raise RuntimeError(f"warm-up cell failed: {frame}")
    forget_sources()
    _sluice_abi.install_cell_runner(_cell_hooks())  # a fresh runner: cells count from one
    _calls.reset()
    sluice._counts.clear()


def _install_random_seeding():
    """Each container draws its own random numbers.

    RustPython seeds a `random.Random` without a seed from Rust's thread generator, whose
    state is in the image (importing `random` seeded `random._inst` from it while the image
    was made): every container drew the same numbers. A missing seed now comes from
    `os.urandom`, which reads the container's own stream from the host.

    And the module's shared generator is seeded on its first draw, not at every container's
    first execution: seeding was 9% of a first `x = 1 + 1`, and most cells never draw. Its
    functions in the `random` module seed it on their first call and put the originals back;
    one imported by name before then keeps seeding first.
    """
    import functools
    import random

    seed_in_rust = random.Random.seed

    @functools.wraps(seed_in_rust)
    def seed(self, a=None, version=2):
        if a is None:
            a = int.from_bytes(os.urandom(RANDOM_SEED_BYTES), "little")
        seed_in_rust(self, a, version)

    random.Random.seed = seed
    shared = random._inst
    random.seed = shared.seed  # bound to the method above
    originals = {name: value for name, value in vars(random).items() if getattr(value, "__self__", None) is shared}
    unseeded = True

    def seed_now():
        nonlocal unseeded
        if unseeded:
            unseeded = False
            vars(random).update(originals)
            shared.seed()

    def seeding_first(original):
        @functools.wraps(original)
        def draw(*args, **kwargs):
            seed_now()
            return original(*args, **kwargs)

        return draw

    for name, original in originals.items():
        setattr(random, name, seeding_first(original))


def _scrub_build_paths():
    """Frozen modules carry the build machine's path in `__file__`: show a neutral one."""
    stdlib = os.path.dirname(os.__file__)
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.startswith(stdlib):
            try:
                module.__file__ = "/usr/local/lib/python3.14" + path[len(stdlib) :]
            except (AttributeError, TypeError):
                pass


def _install_fast_json():
    """`json.loads` (and so `json.load`) decodes plain calls natively (`_sluice_abi.loads`),
    and `json.dumps` encodes plain data natively with the layout options (`_sluice_abi.json_dumps`);
    with any other option, or whenever those decline, the standard codec answers as before."""
    import functools
    import json

    standard = json.loads

    @functools.wraps(standard)  # its signature too, through __wrapped__
    def loads(s, **options):
        if not options and type(s) is str:
            value = _sluice_abi.loads(s)
            if value is not NotImplemented:
                return value
        return standard(s, **options)

    json.loads = loads

    standard_dumps = json.dumps

    @functools.wraps(standard_dumps)
    def dumps(obj, **options):
        layout = _plain_json_layout(**options)
        if layout is not None:
            text = _sluice_abi.json_dumps(obj, *layout)
            if text is not NotImplemented:
                return text
        return standard_dumps(obj, **options)

    json.dumps = dumps


# json.dumps's options that, at these values, leave plain data to the native encoder.
_JSON_DEFAULT_OPTIONS = {"skipkeys": False, "check_circular": True, "allow_nan": True, "cls": None, "default": None}


def _plain_json_layout(ensure_ascii=True, indent=None, separators=None, sort_keys=False, **others):
    """`json.dumps`'s options resolved as `JSONEncoder` resolves them (indent as a string,
    both separators), or None when an option needs the standard encoder."""
    for name, value in others.items():
        if name not in _JSON_DEFAULT_OPTIONS or value is not _JSON_DEFAULT_OPTIONS[name]:
            return None
    if type(ensure_ascii) is not bool or type(sort_keys) is not bool:
        return None
    if type(indent) is int:
        indent = " " * indent
    elif indent is not None and type(indent) is not str:
        return None
    if separators is None:
        separators = (", " if indent is None else ",", ": ")
    elif type(separators) not in (tuple, list) or len(separators) != 2:
        return None
    item_separator, key_separator = separators
    if type(item_separator) is not str or type(key_separator) is not str:
        return None
    return indent, item_separator, key_separator, sort_keys, ensure_ascii


def _install_fast_builtins():
    """`sum` adds ints in a machine integer and floats compensated (`_sluice_abi.sum`), as
    CPython 3.12+ does."""
    import builtins

    builtins.sum = _sluice_abi.sum


def preinit(boot):
    """Runs once, before the image is snapshotted: everything here is shared by every container."""
    sys.stdout = sys.__stdout__ = STDOUT
    sys.stderr = sys.__stderr__ = STDERR
    _sluice_imports.install(boot["lazy_modules"])
    _sluice_fs.install()
    sys.setrecursionlimit(DEFAULT_RECURSION_LIMIT)
    sys.setrecursionlimit = _clamped_setrecursionlimit(sys.setrecursionlimit)
    events._set_event_loop_policy(Policy())
    asyncio.run = asyncio.runners.run = run
    asyncio.gather = tasks.gather = gather
    _install_fast_json()
    _install_fast_builtins()
    _sluice_abi.install_cell_runner(_cell_hooks())
    _warm_up()
    _install_random_seeding()
    _scrub_build_paths()
    main = type(sys)("__main__")
    main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main
    # Everything alive now is shared by every container through the image: move it out of
    # the collector's reach, so collections neither scan it nor dirty its pages.
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_GC_THRESHOLD)
