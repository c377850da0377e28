"""CPython and Monty's side of `cargo bench --bench peers`.

Reads one JSON request per line on stdin and answers one JSON line on stdout, so the Rust
harness can interleave runs of every system in one process tree. Each request names a
system ("cpython", in this process, or "monty", through pydantic-monty's worker pool) and a
workload; the answer gives the time in milliseconds, measured here around the work only,
and the script's output so the harness can check every system printed the same thing.

`python3 driver.py --peak-rss COMMAND...` prints the peak resident memory of a fresh process
running COMMAND, in KiB; `--peak-rss-monty FILE` that of Monty running FILE (this client
plus its worker processes).
"""

import ast
import asyncio
import contextlib
import io
import json
import sys
import time

try:
    import pydantic_monty as monty
except ImportError as error:  # the harness reports Monty as skipped
    monty = None
    MONTY_IMPORT_ERROR = str(error)


def answer(tools, name, args):
    """A tool's result: the argument "i" as text, a constant, or a lookup by arguments."""
    spec = tools[name]
    if spec["kind"] == "index":
        return str(args["i"])
    if spec["kind"] == "const":
        return spec["value"]
    return spec["values"][json.dumps(args, sort_keys=True, separators=(",", ":"))]


class CPython:
    """Scripts run in this interpreter; tools are async functions, as in Sluice."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()

    def tool_globals(self, tools):
        names = {}
        for name in tools:
            async def call(args, _name=name):
                return answer(tools, _name, args)
            names[name] = call
        return names

    def run(self, code, scope):
        compiled = compile(code, "<script>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            pending = eval(compiled, scope)
            if pending is not None:
                self.loop.run_until_complete(pending)
        return out.getvalue()

    def workload(self, request):
        tools = request.get("tools", {})
        scope = {"__name__": "__main__", **self.tool_globals(tools)}
        for setup in request.get("setup", []):
            self.run(setup, scope)
        started = time.perf_counter()
        output = "".join(self.run(cell, scope) for cell in request["cells"])
        return time.perf_counter() - started, output


class Monty:
    """Scripts run in a Monty session; tool calls come back as snapshots answered here."""

    def __init__(self):
        self.pool = monty.Monty()
        self.pool.__enter__()
        self.limits = {"max_suspensions": 10_000_000}

    def run(self, session, code, tools):
        out = monty.CollectString()
        snap = session.feed_start(code, print_callback=out)
        pending = {}
        while not isinstance(snap, monty.MontyComplete):
            if isinstance(snap, monty.FunctionSnapshot):
                pending[snap.call_id] = answer(tools, snap.function_name, snap.args[0])
                snap = snap.resume({"future": ...})
            elif isinstance(snap, monty.FutureSnapshot):
                ready = {cid: {"return_value": pending.pop(cid)} for cid in snap.pending_call_ids}
                snap = snap.resume(ready)
            else:
                raise RuntimeError(f"unexpected Monty snapshot {type(snap).__name__}")
        return out.output

    def workload(self, request):
        tools = request.get("tools", {})
        if request.get("fresh_pool"):
            started = time.perf_counter()
            with monty.Monty() as pool, pool.checkout(limits=self.limits) as session:
                output = "".join(self.run(session, cell, tools) for cell in request["cells"])
            return time.perf_counter() - started, output
        with self.pool.checkout(limits=self.limits) as session:
            for setup in request.get("setup", []):
                self.run(session, setup, tools)
            started = time.perf_counter()
            if request.get("snapshot"):
                return self.snapshot(session, request)
            output = "".join(self.run(session, cell, tools) for cell in request["cells"])
            return time.perf_counter() - started, output

    def snapshot(self, session, request):
        """Saves the session, restores it in a new one, and runs the check cells there."""
        started = time.perf_counter()
        blob = session.dump()
        saved = time.perf_counter()
        with self.pool.checkout(limits=self.limits) as elsewhere:
            elsewhere.load_session(blob)
            restored = time.perf_counter()
            output = "".join(self.run(elsewhere, cell, {}) for cell in request["cells"])
        extra = {"bytes": len(blob), "save_ms": (saved - started) * 1e3, "restore_ms": (restored - saved) * 1e3}
        return restored - started, output, extra


def serve():
    systems = {"cpython": CPython()}
    hello = {"python": sys.version.split()[0]}
    if monty is None:
        hello["monty_error"] = MONTY_IMPORT_ERROR
    else:
        try:
            systems["monty"] = Monty()
            from importlib.metadata import version
            hello["monty"] = version("pydantic-monty")
        except Exception as error:  # a pool that cannot start: Monty is skipped
            hello["monty_error"] = f"{type(error).__name__}: {error}"
    print(json.dumps(hello), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        system = systems.get(request["system"])
        try:
            if system is None:
                raise RuntimeError(f"{request['system']} is not available")
            seconds, output, *extra = system.workload(request)
            reply = {"ms": seconds * 1e3, "output": output, **(extra[0] if extra else {})}
        except Exception as error:
            reply = {"error": f"{type(error).__name__}: {error}"}
        print(json.dumps(reply), flush=True)
    if "monty" in systems:
        systems["monty"].pool.__exit__(None, None, None)


def peak_rss_of_command(command):
    """Peak resident memory of a fresh process running `command`, in KiB."""
    import os
    import subprocess

    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        raise SystemExit(f"{command} failed with status {status}")
    return usage.ru_maxrss


def high_water_kib(pid="self"):
    """A process's peak resident memory (`VmHWM`), in KiB. Unlike `ru_maxrss`, it starts
    afresh at exec, so a large parent process does not show in it."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def peak_rss_of_monty(path):
    """Peak resident memory of Monty running a script: this client plus its worker
    processes (read while they are alive), in KiB."""
    import os

    code = open(path).read()
    me = str(os.getpid())
    with monty.Monty() as pool, pool.checkout(limits={"max_suspensions": 10_000_000}) as session:
        session.feed_run(code, print_callback=monty.CollectString())
        workers = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    if stat.read().rsplit(")", 1)[1].split()[1] == me:
                        workers.append(high_water_kib(pid))
            except OSError:
                continue
    return high_water_kib() + sum(workers)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--peak-rss-monty"]:
        print(peak_rss_of_monty(sys.argv[2]))
    elif sys.argv[1:2] == ["--peak-rss"]:
        print(peak_rss_of_command(sys.argv[2:]))
    else:
        serve()
