"""The guest side of an execution: compile a cell, run it on an event loop that hands
tool calls to the host, and describe each step in a frame (see ../README.md).

The host calls `dispatch(request)` with {"op": "execute" | "resume", ...} and gets back
{"kind": "done" | "pending" | "fault", ...}. When every task waits on a tool, `dispatch`
returns a "pending" frame: no native frame is left behind, so the paused coroutines live
in linear memory until the host resumes them with results.
"""

import ast
import asyncio
import collections
import heapq
import io
import linecache
import sys
import time
import traceback

import _sluice_abi
import sluice
from asyncio import events, futures, tasks

# Python's own recursion limit; sized so RecursionError comes before the wasm stack ends.
DEFAULT_RECURSION_LIMIT = 1000
MAX_RECURSION_LIMIT = 2000
# Cells whose source stays in linecache for tracebacks of functions they defined.
MAX_CACHED_CELLS = 256
# Rounds of callbacks given to cancelled leftover tasks before an execution ends.
CANCEL_ROUNDS = 8
CO_COROUTINE = 0x80
CO_ITERABLE_COROUTINE = 0x100
CO_ASYNC_GENERATOR = 0x200
_RUNTIME_PREFIX = "<sluice:"
_TOOL_MARK = "_sluice_tool"


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


class _Calls:
    """Tool calls of the current execution, shared by every loop that runs in it."""

    def __init__(self):
        self.next_seq = 0
        self.unsent = []  # [seq, name, input_json] not yet handed to the host
        self.futures = {}  # seq -> future, until answered or cancelled
        self.sent = set()  # seqs the host knows about and has not answered
        self.cancelled = []  # sent seqs the script gave up on since the last frame

    def add(self, loop, name, input_json):
        fut = loop.create_future()
        seq = self.next_seq
        self.next_seq += 1
        self.unsent.append([seq, name, input_json])
        self.futures[seq] = fut
        fut.add_done_callback(lambda f, seq=seq: self._settled(seq, f))
        return fut

    def _settled(self, seq, fut):
        if not fut.cancelled():
            return
        self.futures.pop(seq, None)
        if seq in self.sent:
            self.sent.discard(seq)
            self.cancelled.append(seq)
        else:
            self.unsent = [c for c in self.unsent if c[0] != seq]

    def waiting(self):
        return bool(self.unsent or self.sent)

    def take_frame(self, wake_after_ns):
        calls = [{"seq": s, "name": n, "input": i} for s, n, i in self.unsent]
        self.sent.update(s for s, _, _ in self.unsent)
        self.unsent = []
        cancelled, self.cancelled = self.cancelled, []
        return {"kind": "pending", "calls": calls, "cancelled": cancelled, "wake_after_ns": wake_after_ns}

    def apply(self, results):
        """Settles futures from the host's results; unknown or stale seqs are ignored."""
        for result in results:
            seq = result.get("seq")
            if seq not in self.sent:
                continue
            self.sent.discard(seq)
            fut = self.futures.pop(seq, None)
            if fut is None or fut.done():
                continue
            error = result.get("error")
            if error is not None:
                fut.set_exception(sluice._error_from_host(error))
            else:
                content = result.get("content")
                fut.set_result(content if isinstance(content, str) else "")


class _Deadlock(Exception):
    pass


class SluiceLoop(events.AbstractEventLoop):
    """An asyncio loop whose only source of I/O is the host answering tool calls.

    Timers run on the host-given clock: when nothing else can happen the loop moves the
    clock to the next timer instead of waiting, so sleeps cost no wall time.
    """

    def __init__(self):
        self._ready = collections.deque()
        self._timers = []
        self._running = False
        self._closed = False
        self._stopping = False
        self._debug = False
        self._task_factory = None
        self._exception_handler = None

    # -- scheduling --------------------------------------------------------------
    def time(self):
        return time.monotonic()

    def call_soon(self, callback, *args, context=None):
        self._check_closed()
        handle = events.Handle(callback, args, self, context)
        self._ready.append(handle)
        return handle

    call_soon_threadsafe = call_soon

    def call_later(self, delay, callback, *args, context=None):
        return self.call_at(self.time() + delay, callback, *args, context=context)

    def call_at(self, when, callback, *args, context=None):
        self._check_closed()
        timer = events.TimerHandle(when, callback, args, self, context)
        heapq.heappush(self._timers, timer)
        timer._scheduled = True
        return timer

    def _timer_handle_cancelled(self, handle):
        pass  # cancelled timers are dropped lazily when they reach the top of the heap

    def create_future(self):
        return futures.Future(loop=self)

    def create_task(self, coro, *, name=None, context=None, **kwargs):
        self._check_closed()
        if self._task_factory is not None:
            return self._task_factory(self, coro, name=name, context=context, **kwargs)
        return tasks.Task(coro, loop=self, name=name, context=context, **kwargs)

    def set_task_factory(self, factory):
        self._task_factory = factory

    def get_task_factory(self):
        return self._task_factory

    def run_in_executor(self, executor, func, *args):
        """No threads in the sandbox: the function runs now and its future is settled."""
        fut = self.create_future()
        try:
            fut.set_result(func(*args))
        except BaseException as exc:  # noqa: B036 - delivered through the future
            fut.set_exception(exc)
        return fut

    def set_default_executor(self, executor):
        pass

    # -- state ---------------------------------------------------------------------
    def get_debug(self):
        return self._debug

    def set_debug(self, enabled):
        self._debug = bool(enabled)

    def is_running(self):
        return self._running

    def is_closed(self):
        return self._closed

    def close(self):
        if self._running:
            raise RuntimeError("Cannot close a running event loop")
        self._closed = True
        self._ready.clear()
        self._timers.clear()

    def stop(self):
        self._stopping = True

    def _check_closed(self):
        if self._closed:
            raise RuntimeError("Event loop is closed")

    async def shutdown_asyncgens(self):
        pass

    async def shutdown_default_executor(self, timeout=None):
        pass

    # -- errors --------------------------------------------------------------------
    def get_exception_handler(self):
        return self._exception_handler

    def set_exception_handler(self, handler):
        self._exception_handler = handler

    def default_exception_handler(self, context):
        message = context.get("message") or "Unhandled exception in event loop"
        exc = context.get("exception")
        lines = [message]
        if exc is not None:
            lines.append(_format_exception(exc).rstrip("\n"))
        sys.stderr.write("\n".join(lines) + "\n")

    def call_exception_handler(self, context):
        handler = self._exception_handler
        if handler is None:
            self.default_exception_handler(context)
        else:
            handler(self, context)

    # -- running -------------------------------------------------------------------
    def _enter(self):
        if self._running:
            raise RuntimeError("This event loop is already running")
        if events._get_running_loop() is not None:
            raise RuntimeError("Cannot run the event loop while another loop is running")
        self._running = True
        events._set_running_loop(self)

    def _leave(self):
        self._running = False
        events._set_running_loop(None)

    def _run_ready(self):
        """Runs the callbacks that are ready now; timers that fell due join first."""
        now = self.time()
        timers = self._timers
        while timers and (timers[0]._cancelled or timers[0]._when <= now):
            timer = heapq.heappop(timers)
            if not timer._cancelled:
                timer._scheduled = False
                self._ready.append(timer)
        ready = self._ready
        for _ in range(len(ready)):
            handle = ready.popleft()
            if not handle._cancelled:
                handle._run()

    def _next_timer(self):
        while self._timers and self._timers[0]._cancelled:
            heapq.heappop(self._timers)
        return self._timers[0]._when if self._timers else None

    def _advance(self, until):
        """Nothing can run: move the host clock, or say what the loop waits for."""
        if _calls.waiting():
            when = self._next_timer()
            wake = None if when is None else max(0, int((when - self.time()) * 1e9))
            return _calls.take_frame(wake)
        when = self._next_timer()
        if when is None:
            raise _Deadlock()
        delay = when - self.time()
        if delay > 0:
            time.sleep(delay)  # the host moves its clock; no wall time passes
        return None

    def drive(self, finished):
        """Runs until `finished()` or until every task waits on the host: the pending frame."""
        self._enter()
        try:
            while True:
                self._run_ready()
                if finished():
                    return None
                if self._ready or self._stopping:
                    self._stopping = False
                    continue
                frame = self._advance(finished)
                if frame is not None:
                    return frame
        finally:
            self._leave()

    def run_until_complete(self, future):
        """The blocking path: for a loop run from inside a function call, the host answers
        tool calls while this native frame waits."""
        self._check_closed()
        if self._running and _called_from_cell_top_level():
            return _run_nested(future)
        future = tasks.ensure_future(future, loop=self)
        while True:
            try:
                frame = self.drive(future.done)
            except _Deadlock:
                raise RuntimeError("Event loop stopped before Future completed.") from None
            if frame is None:
                return future.result()
            _calls.apply(_sluice_abi.wait(frame).get("results") or [])

    def run_forever(self):
        raise RuntimeError("run_forever() cannot work in a Sluice sandbox; await the work instead")


class _Policy(events._AbstractEventLoopPolicy):
    def __init__(self):
        self._loop = None

    def get_event_loop(self):
        if self._loop is None or self._loop.is_closed():
            self._loop = SluiceLoop()
        return self._loop

    def set_event_loop(self, loop):
        self._loop = loop

    def new_event_loop(self):
        return SluiceLoop()


def _called_from_cell_top_level():
    """True when the nearest coroutine frame on the stack is a cell's own module code.

    A cell with a top-level `await` runs as a coroutine only because Sluice runs it that way;
    a plain function it calls may use `asyncio.run` as it could in a script. Inside a
    coroutine the script wrote, CPython's "already running" error stands.
    """
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith(_RUNTIME_PREFIX) or code.co_filename.startswith("asyncio"):
            frame = frame.f_back
            continue
        if code.co_name == "<module>" and code.co_filename.startswith("<cell "):
            return True
        if code.co_flags & (CO_COROUTINE | CO_ITERABLE_COROUTINE | CO_ASYNC_GENERATOR):
            return False
        frame = frame.f_back
    return False


def _run_nested(main):
    """Runs `main` to its end on a fresh loop inside the running cell (the blocking path)."""
    outer = events._get_running_loop()
    outer_task = tasks._swap_current_task(outer, None)
    loop = SluiceLoop()
    events._set_running_loop(None)
    try:
        return loop.run_until_complete(main)
    finally:
        loop.close()
        events._set_running_loop(outer)
        tasks._swap_current_task(outer, outer_task)


_original_run = asyncio.runners.run


def _run(main, *, debug=None, loop_factory=None):
    if events._get_running_loop() is not None and _called_from_cell_top_level():
        return _run_nested(main)
    return _original_run(main, debug=debug, loop_factory=loop_factory)


_run.__doc__ = _original_run.__doc__
_run.__wrapped__ = _original_run


# -- tools -------------------------------------------------------------------------------
def call_tool(name, input_json):
    """A future for one tool call, answered when the host resumes the guest."""
    loop = events.get_running_loop()
    return _calls.add(loop, name, input_json)


def bind_input(name, params, args, kwargs):
    """One dict, keyword arguments, or positional arguments in input_schema order."""
    if len(args) == 1 and isinstance(args[0], dict) and not kwargs:
        data = args[0]
    elif args:
        if len(args) > len(params):
            raise TypeError(f"{name}() takes one dict or up to {len(params)} positional arguments")
        data = dict(zip(params, args))
        for key, value in kwargs.items():
            if key in data:
                raise TypeError(f"{name}() got multiple values for argument '{key}'")
            data[key] = value
    else:
        data = dict(kwargs)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise TypeError(f"{name}() takes a dict of arguments, not {type(data).__name__}")
    try:
        return _sluice_abi.dumps(data)
    except ValueError as exc:
        raise TypeError(f"{name}() arguments must be JSON data: {exc}") from None


def _make_tool(name, params, doc):
    params = tuple(params)

    async def tool(*args, **kwargs):
        return await call_tool(name, bind_input(name, params, args, kwargs))

    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = doc or f"Calls the tool {name!r}; returns its result text."
    setattr(tool, _TOOL_MARK, name)
    return tool


def _python_name(name):
    ident = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    if not ident or ident[0].isdigit():
        ident = "_" + ident
    import keyword

    return ident + "_" if keyword.iskeyword(ident) else ident


def _bind_tools(namespace, tool_specs):
    for key, value in list(namespace.items()):
        if getattr(value, _TOOL_MARK, None) is not None:
            del namespace[key]
    for spec in tool_specs:
        name = spec["name"]
        namespace[_python_name(name)] = _make_tool(name, spec.get("params") or (), spec.get("description"))


# -- cells -------------------------------------------------------------------------------
class _RunRewriter(ast.NodeTransformer):
    """`asyncio.run(x)` at module level becomes `await x`, so no native frame waits."""

    def _skip(self, node):
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _skip
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _skip

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "run"
            and isinstance(func.value, ast.Name)
            and func.value.id == "asyncio"
            and len(node.args) == 1
            and not node.keywords
        ):
            return ast.copy_location(ast.Await(value=node.args[0]), node)
        return node


def _compile_cell(source, filename):
    """(body code, trailing-expression code or None); either may be a coroutine code."""
    tree = ast.parse(source, filename, "exec")
    tree = ast.fix_missing_locations(_RunRewriter().visit(tree))
    expr = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        expr = ast.Expression(tree.body.pop().value)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    body = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    expr_code = None
    if expr is not None:
        expr_code = compile(expr, filename, "eval", flags=flags, dont_inherit=True)
    return body, expr_code


def _is_coroutine_code(code):
    return code is not None and bool(code.co_flags & CO_COROUTINE)


def _format_exception(exc):
    """A traceback without the runtime's own frames."""
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
    seen = set()
    todo = [te]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        kept = [f for f in item.stack if not f.filename.startswith(_RUNTIME_PREFIX)]
        item.stack = traceback.StackSummary.from_list(kept)
        todo.extend(x for x in (item.__cause__, item.__context__) if x is not None)
        todo.extend(getattr(item, "exceptions", None) or ())
    return "".join(te.format())


class _Execution:
    def __init__(self, number, source, namespace):
        self.number = number
        self.source = source
        self.namespace = namespace
        self.main = None
        self.loop = None


_calls = _Calls()
_execution = None
_executions_started = 0
_seeded = False
_cell_names = collections.deque()


def _remember_source(filename, source):
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    _cell_names.append(filename)
    while len(_cell_names) > MAX_CACHED_CELLS:
        linecache.cache.pop(_cell_names.popleft(), None)


def _done(value=None, exc=None):
    global _execution
    frame = {"kind": "done", "return_code": 0, "value_repr": None, "error": None, "counts": dict(sluice._counts)}
    if exc is not None:
        if isinstance(exc, SystemExit):
            frame["return_code"] = _exit_code(exc)
        else:
            text = _format_exception(exc)
            sys.stderr.write(text)
            frame["return_code"] = 1
            frame["error"] = {"type": type(exc).__name__, "message": str(exc), "traceback": text}
    elif value is not None:
        try:
            frame["value_repr"] = repr(value)
        except BaseException as repr_exc:  # noqa: B036 - a broken __repr__ is the script's error
            return _done(exc=repr_exc)
    _execution = None
    return frame


def _exit_code(exc):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(str(code) + "\n")
    return 1


async def _run_cell(body, expr, namespace):
    result = eval(body, namespace)
    if _is_coroutine_code(body):
        await result
    if expr is None:
        return None
    value = eval(expr, namespace)
    if _is_coroutine_code(expr):
        value = await value
    return value


def _leftover_tasks(loop):
    return [t for t in tasks.all_tasks(loop) if not t.done()]


def _finish_async(execution):
    """The main task is done: cancel what it left running, then report its outcome."""
    loop, main = execution.loop, execution.main
    for _ in range(CANCEL_ROUNDS):
        leftovers = _leftover_tasks(loop)
        if not leftovers:
            break
        for task in leftovers:
            task.cancel()
        loop._enter()
        try:
            loop._run_ready()
        finally:
            loop._leave()
    if main.cancelled():
        return _done(exc=asyncio.CancelledError("the script's main task was cancelled"))
    exc = main.exception()
    return _done(exc=exc) if exc is not None else _done(value=main.result())


def _step(execution):
    try:
        frame = execution.loop.drive(execution.main.done)
    except _Deadlock:
        execution.main.cancel()
        _finish_async(execution)
        return _done(exc=RuntimeError("every task is waiting and nothing can wake it (deadlock)"))
    if frame is not None:
        return frame
    return _finish_async(execution)


def _execute(request):
    global _execution, _executions_started, _seeded
    if not _seeded:
        import random

        random.seed()  # from the host's per-container stream, not the image's baked state
        _seeded = True
    _executions_started += 1
    sluice._counts.clear()
    _calls.__init__()
    namespace = sys.modules["__main__"].__dict__
    _bind_tools(namespace, request.get("tools") or ())
    source = request["code"]
    filename = f"<cell {_executions_started}>"
    _remember_source(filename, source)
    execution = _Execution(_executions_started, source, namespace)
    try:
        body, expr = _compile_cell(source, filename)
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as exc:
        return _done(exc=exc)
    if not (_is_coroutine_code(body) or _is_coroutine_code(expr)):
        try:
            exec(body, namespace)
            value = eval(expr, namespace) if expr is not None else None
        except BaseException as exc:  # noqa: B036 - the script's outcome, reported as data
            return _done(exc=exc)
        return _done(value=value)
    loop = SluiceLoop()
    execution.loop = loop
    execution.main = loop.create_task(_run_cell(body, expr, namespace))
    _execution = execution
    return _step(execution)


def _resume(request):
    if _execution is None:
        return {"kind": "fault", "message": "no execution is waiting for results"}
    _calls.apply(request.get("results") or [])
    return _step(_execution)


def dispatch(request):
    op = request.get("op")
    if op == "execute":
        return _execute(request)
    if op == "resume":
        return _resume(request)
    return {"kind": "fault", "message": f"unknown op {op!r}"}


# -- pre-initialization ----------------------------------------------------------------------
_PRELOADED = (
    "asyncio asyncio.taskgroups asyncio.timeouts base64 bisect collections copy csv "
    "dataclasses datetime decimal enum fractions functools hashlib heapq itertools json "
    "keyword math operator random re statistics string textwrap typing uuid"
)


def _clamped_setrecursionlimit(original):
    def setrecursionlimit(limit):
        original(min(int(limit), MAX_RECURSION_LIMIT))

    setrecursionlimit.__doc__ = original.__doc__
    return setrecursionlimit


def preinit(boot):
    """Runs once, before the image is snapshotted: everything here is shared by every container."""
    import importlib

    for name in _PRELOADED.split():
        importlib.import_module(name)
    sys.stdout = sys.__stdout__ = _HostStream(1, "<stdout>")
    sys.stderr = sys.__stderr__ = _HostStream(2, "<stderr>")
    sys.setrecursionlimit(DEFAULT_RECURSION_LIMIT)
    sys.setrecursionlimit = _clamped_setrecursionlimit(sys.setrecursionlimit)
    events._set_event_loop_policy(_Policy())
    asyncio.run = asyncio.runners.run = _run
    main = type(sys)("__main__")
    main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main
