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
import collections.abc
import gc
import heapq
import inspect
import io
import keyword
import linecache
import os
import sys
import time
import traceback

import _sluice_abi
import sluice
from asyncio import events, futures, tasks
from asyncio.events import _get_running_loop
from asyncio.futures import Future as _Future
from _sluice_abi import dumps as _dumps

# Python's own recursion limit; sized so RecursionError comes before the wasm stack ends.
DEFAULT_RECURSION_LIMIT = 1000
MAX_RECURSION_LIMIT = 2000
# Longest `repr` of a trailing expression returned; the rest is cut with a marker.
MAX_REPR_CHARS = 100_000
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


_STDOUT = _HostStream(1, "<stdout>")
_STDERR = _HostStream(2, "<stderr>")


class _Calls:
    """Tool calls of the current execution, shared by every loop that runs in it.

    Each call has one waiter: the future of a single awaited call, or the `_ToolGather`
    that a gather of plain tool calls created (then no future per call exists at all).
    """

    def __init__(self):
        self.next_seq = 0
        self.unsent = []  # (seq, name, input_json) not yet handed to the host
        self.waiters = {}  # seq -> Future | (_ToolGather, index)
        self.sent = set()  # seqs the host knows about and has not answered

    def register(self, name, input_json, waiter):
        seq = self.next_seq
        self.next_seq = seq + 1
        self.unsent.append((seq, name, input_json))
        self.waiters[seq] = waiter
        return seq

    def waiting(self):
        return bool(self.unsent or self.sent)

    def _abandoned(self, seq):
        waiter = self.waiters.get(seq)
        if type(waiter) is tuple:
            return waiter[0].cancelled()
        return waiter is None or waiter.cancelled()

    def take_frame(self, wake_after_ns):
        # Cancellation is noticed here rather than through a callback on every call.
        cancelled = [seq for seq in self.sent if self._abandoned(seq)]
        for seq in cancelled:
            self.sent.discard(seq)
            self.waiters.pop(seq, None)
        calls = []
        for call in self.unsent:
            seq = call[0]
            if self._abandoned(seq):
                self.waiters.pop(seq, None)
            else:
                calls.append(call)
                self.sent.add(seq)
        self.unsent = []
        return {"kind": "pending", "calls": calls, "cancelled": cancelled, "wake_after_ns": wake_after_ns}

    def apply(self, results):
        """Settles waiters from the host's results ([seq, text] or [seq, null, error]);
        unknown or stale seqs are ignored."""
        waiters, sent = self.waiters, self.sent
        for result in results:
            seq = result[0]
            waiter = waiters.pop(seq, None)
            if waiter is None:
                continue
            sent.discard(seq)
            if len(result) > 2:
                value, failed = sluice._error_from_host(result[2]), True
            else:
                value, failed = result[1], False
                if type(value) is not str:
                    value = ""
            if type(waiter) is tuple:
                waiter[0]._settle(waiter[1], value, failed)
            elif not waiter.done():
                if failed:
                    waiter.set_exception(value)
                else:
                    waiter.set_result(value)


class _Deadlock(Exception):
    pass


class SluiceLoop(events.AbstractEventLoop):
    """An asyncio loop whose only source of I/O is the host answering tool calls.

    Timers run on the host-given clock: when nothing else can happen the loop moves the
    clock to the next timer instead of waiting, so sleeps cost no wall time.
    """

    def __init__(self):
        # Native futures ask their loop get_debug() on creation: answer without a Python call.
        self.get_debug = bool
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
        self.get_debug = (lambda: True) if self._debug else bool

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
        _STDERR.write("\n".join(lines) + "\n")

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
    """Runs `main` to its end on a fresh loop, inside whatever is running (the blocking path)."""
    outer = events._get_running_loop()
    outer_task = tasks._swap_current_task(outer, None) if outer is not None else None
    loop = SluiceLoop()
    events._set_running_loop(None)
    try:
        return loop.run_until_complete(main)
    finally:
        _cancel_leftovers(loop)
        loop.close()
        events._set_running_loop(outer)
        if outer is not None:
            tasks._swap_current_task(outer, outer_task)


def _run(main, *, debug=None, loop_factory=None):
    """`asyncio.run` for the sandbox (CPython's Runner needs signals WASI does not have)."""
    if events._get_running_loop() is not None and not _called_from_cell_top_level():
        raise RuntimeError("asyncio.run() cannot be called from a running event loop")
    if not asyncio.iscoroutine(main):
        raise ValueError(f"a coroutine was expected, got {main!r}")
    return _run_nested(main)


_run.__doc__ = asyncio.runners.run.__doc__


# -- tools -------------------------------------------------------------------------------
def call_tool(name, input_json):
    """A future for one tool call, answered when the host resumes the guest."""
    loop = events.get_running_loop()
    fut = _Future(loop=loop)
    _calls.register(name, input_json, fut)
    return fut


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
    try:
        return _dumps(data)
    except ValueError as exc:
        raise TypeError(f"{name}() arguments must be JSON data: {exc}") from None


_CONSUMED = object()


class _ToolCall:
    """What calling a tool returns: a coroutine that makes one call.

    Written out instead of an `async def` because it is the hot path of every script: a
    gather of these needs no Task, no coroutine frame and no future per call (see
    `_gather`), and a lone `await` costs one future. It is registered as a
    `collections.abc.Coroutine`, so `create_task`, `wait_for` and `ensure_future` take it.
    """

    __slots__ = ("_name", "_input_json", "_error", "_fut", "__weakref__")

    def __init__(self, name, input_json, error):
        self._name = name
        self._input_json = input_json
        self._error = error
        self._fut = None

    def __repr__(self):
        return f"<tool call {self._name}>"

    def __await__(self):
        return self

    def __iter__(self):
        return self

    def __next__(self):
        return self.send(None)

    def send(self, value):
        fut = self._fut
        if fut is None:
            if self._error is not None:
                self._fut = _CONSUMED
                raise self._error
            loop = _get_running_loop()
            if loop is None:
                raise RuntimeError(f"{self._name}() must be awaited inside a running event loop")
            fut = self._fut = _Future(loop=loop)
            _calls.register(self._name, self._input_json, fut)
        elif fut is _CONSUMED:
            raise RuntimeError("cannot reuse already awaited coroutine")
        if not fut.done():
            fut._asyncio_future_blocking = True
            return fut
        self._fut = _CONSUMED
        raise StopIteration(fut.result())

    def throw(self, typ, val=None, tb=None):
        if val is None:
            val = typ() if isinstance(typ, type) else typ
        self.close()
        raise val

    def close(self):
        fut, self._fut = self._fut, _CONSUMED
        if fut is not None and fut is not _CONSUMED and not fut.done():
            fut.cancel()

    @property
    def cr_running(self):
        return False

    @property
    def __name__(self):
        return self._name


collections.abc.Coroutine.register(_ToolCall)


def _make_tool(name, params, doc):
    params = tuple(params)

    def tool(*args, **kwargs):
        if not kwargs and len(args) == 1 and type(args[0]) is dict:
            try:
                return _ToolCall(name, _dumps(args[0]), None)
            except ValueError as exc:
                return _ToolCall(name, None, TypeError(f"{name}() arguments must be JSON data: {exc}"))
        try:
            return _ToolCall(name, bind_input(name, params, args, kwargs), None)
        except TypeError as exc:
            return _ToolCall(name, None, exc)

    inspect.markcoroutinefunction(tool)
    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = doc or f"Calls the tool {name!r}; returns its result text."
    setattr(tool, _TOOL_MARK, name)
    return tool


class _ToolGather(futures.Future):
    """`gather` over plain tool calls: the host's results fill it directly (see
    `_Calls.apply`), with no Task, future or done callback per call."""

    def __init__(self, count, return_exceptions, *, loop):
        super().__init__(loop=loop)
        self._results = [None] * count
        self._remaining = count
        self._return_exceptions = return_exceptions

    def _settle(self, index, value, failed):
        if self.done():
            return
        if failed and not self._return_exceptions:
            self.set_exception(value)
            return
        self._results[index] = value
        self._remaining -= 1
        if not self._remaining:
            self.set_result(self._results)


_original_gather = tasks.gather


def _gather(*coros_or_futures, return_exceptions=False):
    """`asyncio.gather`, with a fast path when every argument is a fresh tool call."""
    fast = bool(coros_or_futures)
    for call in coros_or_futures:
        if type(call) is not _ToolCall or call._fut is not None or call._error is not None:
            fast = False
            break
    if not fast or len(set(map(id, coros_or_futures))) != len(coros_or_futures):
        return _original_gather(*coros_or_futures, return_exceptions=return_exceptions)
    group = _ToolGather(len(coros_or_futures), return_exceptions, loop=events.get_running_loop())
    register = _calls.register
    for index, call in enumerate(coros_or_futures):
        call._fut = _CONSUMED
        register(call._name, call._input_json, (group, index))
    return group


_gather.__doc__ = _original_gather.__doc__


def _python_name(name):
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    ident = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    if not ident or ident[0].isdigit():
        ident = "_" + ident
    return ident + "_" if keyword.iskeyword(ident) else ident


_bound_tools = {}  # python name -> (spec key, function) of the tools bound last time


def _bind_tools(namespace, tool_specs):
    """Binds each tool as a global; unchanged bindings are left alone (this runs every cell)."""
    wanted = {}
    for spec in tool_specs:
        name = spec["name"]
        key = (name, tuple(spec.get("params") or ()), spec.get("description"))
        wanted[_python_name(name)] = key
    for py_name, (key, fn) in list(_bound_tools.items()):
        if wanted.get(py_name) != key or namespace.get(py_name) is not fn:
            if namespace.get(py_name) is fn:
                del namespace[py_name]
            del _bound_tools[py_name]
    for py_name, key in wanted.items():
        if py_name not in _bound_tools:
            fn = _make_tool(key[0], key[1], key[2])
            namespace[py_name] = fn
            _bound_tools[py_name] = (key, fn)


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
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    if "run" in source and "asyncio" in source:
        return _compile_rewritten(source, filename, flags)
    split = _sluice_abi.split_cell(source)
    body_source, expr_source = split if split is not None else (source, None)
    body = compile(body_source, filename, "exec", flags=flags, dont_inherit=True)
    expr = None
    if expr_source is not None:
        expr = compile(expr_source, filename, "eval", flags=flags, dont_inherit=True)
    return body, expr


def _compile_rewritten(source, filename, flags):
    """The slower path through a Python AST, for cells that may call `asyncio.run`."""
    tree = ast.fix_missing_locations(_RunRewriter().visit(ast.parse(source, filename, "exec")))
    expr = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        expr = ast.Expression(tree.body.pop().value)
    body = compile(tree, filename, "exec", flags=flags, dont_inherit=True)
    if expr is not None:
        expr = compile(expr, filename, "eval", flags=flags, dont_inherit=True)
    return body, expr


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
            _STDERR.write(text)
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
    _execution = None
    return frame


def _exit_code(exc):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    _STDERR.write(str(code) + "\n")
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


def _cancel_leftovers(loop):
    """Cancels tasks the script left running and lets them unwind, as asyncio.run does."""
    for _ in range(CANCEL_ROUNDS):
        leftovers = _leftover_tasks(loop)
        if not leftovers:
            return
        for task in leftovers:
            task.cancel()
        loop._enter()
        try:
            loop._run_ready()
        finally:
            loop._leave()


def _finish_async(execution):
    """The main task is done: cancel what it left running, then report its outcome."""
    loop, main = execution.loop, execution.main
    _cancel_leftovers(loop)
    if main.cancelled():
        return _done(exc=asyncio.CancelledError("the script's main task was cancelled"))
    exc = main.exception()
    return _done(exc=exc) if exc is not None else _done(value=main.result())


def _step(execution):
    try:
        frame = execution.loop.drive(execution.main.done)
    except _Deadlock:
        execution.main.cancel()
        _cancel_leftovers(execution.loop)
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
    # Every cell starts with working output, whatever an earlier one did to sys.stdout.
    sys.stdout, sys.stderr = _STDOUT, _STDERR
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


_WARM_UP_CELLS = (
    "a = 1",
    "b = [a, a + 1]\ndef f(x):\n    return x * 2\nf(b[1])",
    "import json\ns = json.dumps({'b': b})\nlen(s)",
    "import asyncio\nasync def g():\n    await asyncio.sleep(0)\n    return 1\nawait g()",
)


def _warm_up():
    """Runs a few typical cells before the snapshot so that what they initialize lazily is
    in the image, then forgets them: containers start as if nothing had run."""
    global _executions_started, _seeded
    warm = type(sys)("__main__")
    warm.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = warm
    for cell in _WARM_UP_CELLS:
        frame = _execute({"op": "execute", "code": cell, "tools": []})
        if frame.get("kind") != "done" or frame.get("return_code") != 0:
            raise RuntimeError(f"warm-up cell failed: {frame}")
    for name in list(_cell_names):
        linecache.cache.pop(name, None)
    _cell_names.clear()
    _executions_started = 0
    _seeded = False
    _calls.__init__()
    sluice._counts.clear()


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


def preinit(boot):
    """Runs once, before the image is snapshotted: everything here is shared by every container."""
    import importlib

    for name in _PRELOADED.split():
        importlib.import_module(name)
    sys.stdout = sys.__stdout__ = _STDOUT
    sys.stderr = sys.__stderr__ = _STDERR
    sys.setrecursionlimit(DEFAULT_RECURSION_LIMIT)
    sys.setrecursionlimit = _clamped_setrecursionlimit(sys.setrecursionlimit)
    events._set_event_loop_policy(_Policy())
    asyncio.run = asyncio.runners.run = _run
    asyncio.gather = tasks.gather = _gather
    _warm_up()
    _scrub_build_paths()
    main = type(sys)("__main__")
    main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main
    # Everything alive now is shared by every container through the image: move it out of
    # the collector's reach, so collections neither scan it nor dirty its pages.
    gc.collect()
    gc.freeze()
