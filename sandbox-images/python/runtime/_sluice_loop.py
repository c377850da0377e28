"""The asyncio event loop of the sandbox: its only I/O is the host, so when every task waits
on a tool call it hands the pending calls back instead of blocking; `asyncio.run` for
scripts, including the nested (blocking) path."""

import asyncio
import collections
import heapq
import sys
import time

import _sluice_abi
import _sluice_fs
from _asyncio import _eager_tasks, _scheduled_tasks
from _sluice_calls import calls as _calls
from _sluice_output import RUNTIME_PREFIX, STDERR, format_exception
from asyncio import events, futures, tasks
from inspect import CO_ASYNC_GENERATOR, CO_COROUTINE, CO_ITERABLE_COROUTINE

# Rounds of callbacks given to cancelled leftover tasks before an execution ends.
CANCEL_ROUNDS = 8
# Timers due within this long of the next one wake with it. A real loop's sleep overshoots,
# so tasks that slept "the same" time (started microseconds apart) run in one round; the
# virtual clock lands exactly, and without this they would run one round each.
TIMER_COALESCE_S = 0.001


class Deadlock(Exception):
    pass


class SluiceLoop(events.AbstractEventLoop):
    """An asyncio loop whose only source of I/O is the host answering tool calls.

    Timers run on the host-given clock: when nothing else can happen the loop moves the
    clock to the next timer instead of waiting, so sleeps cost no wall time.
    """

    # Native futures ask their loop get_debug() on creation: answer without a Python call
    # (`set_debug` replaces it on the instance).
    get_debug = bool
    # State a loop rarely changes lives on the class until it does: every cell that awaits
    # makes a loop, and each attribute set in `__init__` cost it a store.
    _running = False
    _closed = False
    _stopping = False
    _debug = False
    _task_factory = None
    _exception_handler = None

    def __init__(self):
        self._ready = collections.deque()
        self._timers = []

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

    def start_now(self, coro):
        """A task of `coro` whose first step runs now, as `asyncio.eager_task_factory` starts
        one: a cell that never waits ends inside this call, without a callback scheduled and
        run; one that waits goes on in `drive` as any task does. Like a task's step, this may
        raise the `SystemExit` or `KeyboardInterrupt` it stored in the task."""
        self._enter()
        try:
            return tasks.Task(coro, loop=self, eager_start=True)
        finally:
            self._leave()

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
            lines.append(format_exception(exc).rstrip("\n"))
        STDERR.write("\n".join(lines) + "\n")

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
        """When the loop next wakes: the first timer, or the last of those due with it.

        Only the timers that wake together are looked at (popped in order and put back), so a
        wake costs what it wakes, not a scan of every timer."""
        timers = self._timers
        while timers and timers[0]._cancelled:
            heapq.heappop(timers)
        if not timers:
            return None
        horizon = timers[0]._when + TIMER_COALESCE_S
        together = []
        while timers and timers[0]._when <= horizon:
            together.append(heapq.heappop(timers))
        for timer in together:
            heapq.heappush(timers, timer)
        return together[-1]._when

    def _advance(self, until):
        """Nothing can run: move the host clock, or say what the loop waits for."""
        if _calls.waiting():
            when = self._next_timer()
            wake = None if when is None else max(0, int((when - self.time()) * 1e9))
            return _calls.take_frame(wake)
        when = self._next_timer()
        if when is None:
            raise Deadlock()
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
            return run_nested(future)
        future = tasks.ensure_future(future, loop=self)
        while True:
            try:
                frame = self.drive(future.done)
            except Deadlock:
                raise RuntimeError("Event loop stopped before Future completed.") from None
            if frame is None:
                return future.result()
            answer = _sluice_abi.wait(frame)
            _calls.apply(answer.get("results") or [])
            _sluice_fs.place_all(answer.get("files"))  # an OSError reaches the awaiting script

    def run_forever(self):
        raise RuntimeError("run_forever() cannot work in a Sluice sandbox; await the work instead")


class Policy(events._AbstractEventLoopPolicy):
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
        if code.co_filename.startswith(RUNTIME_PREFIX) or code.co_filename.startswith("asyncio"):
            frame = frame.f_back
            continue
        if code.co_name == "<module>" and code.co_filename.startswith("<cell "):
            return True
        if code.co_flags & (CO_COROUTINE | CO_ITERABLE_COROUTINE | CO_ASYNC_GENERATOR):
            return False
        frame = frame.f_back
    return False


def run_nested(main):
    """Runs `main` to its end on a fresh loop, inside whatever is running (the blocking path)."""
    outer = events._get_running_loop()
    outer_task = tasks._swap_current_task(outer, None) if outer is not None else None
    loop = SluiceLoop()
    events._set_running_loop(None)
    try:
        return loop.run_until_complete(main)
    finally:
        cancel_leftovers(loop)
        loop.close()
        events._set_running_loop(outer)
        if outer is not None:
            tasks._swap_current_task(outer, outer_task)


def run(main, *, debug=None, loop_factory=None):
    """`asyncio.run` for the sandbox (CPython's Runner needs signals WASI does not have)."""
    if events._get_running_loop() is not None and not _called_from_cell_top_level():
        raise RuntimeError("asyncio.run() cannot be called from a running event loop")
    if not asyncio.iscoroutine(main):
        raise ValueError(f"a coroutine was expected, got {main!r}")
    return run_nested(main)


run.__doc__ = asyncio.runners.run.__doc__


def _leftover_tasks(loop):
    return [t for t in tasks.all_tasks(loop) if not t.done()]


def cancel_leftovers(loop):
    """Cancels tasks the script left running and lets them unwind, as asyncio.run does."""
    if not _eager_tasks and not _scheduled_tasks.data:
        # No task is registered at all (a cell's main task that ended eagerly never joins the
        # scheduled set): nothing to cancel, without `all_tasks` copying both sets to say so.
        return
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
