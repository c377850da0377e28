"""Tools as async Python functions: binding them into a cell's globals, and the calls they
make (a fast path for `asyncio.gather` over plain tool calls)."""

import collections.abc
import inspect
import keyword

from _sluice_abi import Answered as _Answered
from _sluice_abi import Tool as _NativeTool
from _sluice_abi import ToolCall as _NativeCall
from _sluice_abi import dumps as _dumps
from _sluice_abi import enable_lone_calls
from _sluice_calls import calls as _calls
from _sluice_loop import SluiceLoop
from asyncio import events, futures, tasks
from asyncio.events import _get_running_loop
from asyncio.futures import Future as _Future

_TOOL_MARK = "_sluice_tool"


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


class _ToolCall(_NativeCall):
    """What calling a tool returns: a coroutine that makes one call.

    Not an `async def` because it is the hot path of every script: a gather of these needs
    no Task, no coroutine frame and no future per call (see `_gather`), and a lone `await`
    (nothing else runnable) is made by the native base's `__await__` without a Python frame
    at all. That base (`_sluice_abi.ToolCall`, `src/tool_call.rs`) holds `_name`,
    `_input_json`, `_error` and `_fut`, and decides whether a call can be made at once; the
    paths here are the ones it defers to. It is registered as a
    `collections.abc.Coroutine`, so `create_task`, `wait_for` and `ensure_future` take it.
    """

    __slots__ = ()

    def __repr__(self):
        return f"<tool call {self._name}>"

    def _start(self):
        """Makes the call. Returns its future, or its answer (a `str`) when the host answered
        it at once (the native base's `_call_at_once`: nothing else could run first)."""
        if self._error is not None:
            self._fut = _CONSUMED
            raise self._error
        loop = _get_running_loop()
        if loop is None:
            raise RuntimeError(f"{self._name}() must be awaited inside a running event loop")
        made = self._call_at_once()
        if made is None:
            fut = self._fut = _Future(loop=loop)
            _calls.register(self._name, self._input_json, fut)
            return fut
        if type(made) is str:
            return made
        return self._settle_at_once(*made)

    def _settle_at_once(self, seq, answer):
        """A call made at once whose answer was more than its text: its value (a `str`), its
        failure raised, or a future when the host has not answered it yet."""
        value, failed = _calls.settle_now(seq, answer)
        if failed is None:
            fut = self._fut = _Future(loop=_get_running_loop())
            _calls.register_sent(seq, fut)
            return fut
        if failed:
            raise value
        return value

    def _await_slow(self):
        """`await call` when the native `__await__` could not make the call itself."""
        fut = self._fut
        if fut is _CONSUMED:
            raise RuntimeError("cannot reuse already awaited coroutine")
        if fut is None:
            fut = self._start()
            if type(fut) is str:
                return _Answered(fut)
        return self._wait(fut)

    def _answered(self, seq, answer):
        """`await call` after the native `__await__` made the call and the host's answer was
        more than its text."""
        made = self._settle_at_once(seq, answer)
        return _Answered(made) if type(made) is str else self._wait(made)

    def _wait(self, fut):
        try:
            return (yield from fut)
        except BaseException:
            # Thrown in or closed while waiting: the call is no longer wanted.
            if not fut.done():
                fut.cancel()
            raise
        finally:
            self._fut = _CONSUMED

    def __iter__(self):
        return self

    def __next__(self):
        return self.send(None)

    def send(self, value):
        fut = self._fut
        if fut is None:
            fut = self._start()
            if type(fut) is str:
                raise StopIteration(fut)
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
enable_lone_calls(SluiceLoop, _calls, _CONSUMED)


class _Tool(_NativeTool):
    """A tool as a script sees it: an async function of one dict, keyword arguments, or
    positional arguments in `input_schema` order, returning the result text.

    Calling it with one dict is native (`_sluice_abi.Tool`); `_bind` takes every other call.
    """

    def _bind(self, *args, **kwargs):
        """Every call the native one does not make: arguments bound as `bind_input` says,
        or the error they caused, raised when the call is awaited."""
        name = self._name
        try:
            return _ToolCall(name, bind_input(name, self._params, args, kwargs), None, self._in_place)
        except TypeError as exc:
            return _ToolCall(name, None, exc)

    @property
    def __signature__(self):
        kinds = inspect.Parameter
        return inspect.Signature([kinds("args", kinds.VAR_POSITIONAL), kinds("kwargs", kinds.VAR_KEYWORD)])

    def __repr__(self):
        return f"<tool {self._name}>"


def _make_tool(name, params, doc, in_place):
    tool = _Tool(name, _ToolCall, in_place)
    tool._params = tuple(params)
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


def gather(*coros_or_futures, return_exceptions=False):
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


gather.__doc__ = _original_gather.__doc__


def _python_name(name):
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    ident = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    if not ident or ident[0].isdigit():
        ident = "_" + ident
    return ident + "_" if keyword.iskeyword(ident) else ident


# Python name -> (spec key, function) of the tools bound last time; changed in place only.
# The cell runner calls `bind_tools` only when a cell names tools or this holds some.
bound_tools = {}
_bound_specs = None  # the tool specs bound last time, as the host sent them


def bind_tools(namespace, tool_specs):
    """Binds each tool as a global; unchanged bindings are left alone (this runs every cell)."""
    global _bound_specs
    if tool_specs == _bound_specs:
        for name, (_, fn) in bound_tools.items():
            if namespace.get(name) is not fn:
                break
        else:
            return  # the same tools as last time, each still bound: what a session's cells mostly send
    _bound_specs = None  # until every tool below is bound
    wanted = {}
    for spec in tool_specs:
        name = spec["name"]
        key = (name, tuple(spec.get("params") or ()), spec.get("description"), bool(spec.get("answered_in_place")))
        wanted[_python_name(name)] = key
    for py_name, (key, fn) in list(bound_tools.items()):
        if wanted.get(py_name) != key or namespace.get(py_name) is not fn:
            if namespace.get(py_name) is fn:
                del namespace[py_name]
            del bound_tools[py_name]
    for py_name, key in wanted.items():
        if py_name not in bound_tools:
            fn = _make_tool(*key)
            namespace[py_name] = fn
            bound_tools[py_name] = (key, fn)
    _bound_specs = tool_specs
