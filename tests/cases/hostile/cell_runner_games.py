# A script that reaches the guest's native cell runner (`_sluice_abi`): it replaces the runner
# while the objects the old one held run a cell as they are freed (the guest must not abort),
# then rebinds `sluice._counts` and replaces `builtins.eval`; later cells run as before.
import _sluice_abi
import _sluice_runtime

ran = []


class RunsACellWhenFreed:
    def __del__(self):
        frame = _sluice_abi.execute_cell({"op": "execute", "code": "1 + 1", "tools": []})
        ran.append(frame["value_repr"])


hooks = _sluice_runtime._cell_hooks()
freed = RunsACellWhenFreed()
_sluice_abi.install_cell_runner({name: ({} if name in ("runtime", "bound_tools") else freed) for name in hooks})
del freed
_sluice_abi.install_cell_runner(hooks)
print("a cell ran while the old runner was freed:", ran)
# --- cell ---
import builtins
import sluice

sluice._counts = {"rows": 3}
builtins.eval = lambda *args: "hijacked"
# --- cell ---
print("counts cleared:", sluice._counts)
y = 6 * 7
# --- cell ---
import asyncio

await asyncio.sleep(0)
print("both cells ran:", y, "and this one")
