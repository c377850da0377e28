"""The tool calls of the current execution: numbered, handed to the host in one frame when
every task waits, settled from the host's results."""

import _sluice_fs
import sluice


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

    def reset(self):
        """Empties the table for a new execution. Every entry is keyed by a number from
        `next_seq`, so the cell runner calls this only once numbering has started."""
        self.__init__()

    def register(self, name, input_json, waiter):
        seq = self.next_seq
        self.next_seq = seq + 1
        self.unsent.append((seq, name, input_json))
        self.waiters[seq] = waiter
        return seq

    def settle_now(self, seq, answer):
        """What the host's answer to call `seq`, made at once (the native
        `ToolCall._call_at_once`), says of it: `(value, failed)`, or `(None, None)` when the
        answer lacks the call; the call is then outstanding and the caller waits for it as
        usual (`register_sent`)."""
        found = (None, None)
        for result in answer.get("results") or ():
            if result[0] == seq:
                found = _settled_value(result)
        if found[1] is None:
            self.sent.add(seq)  # still outstanding: the host holds it
        _sluice_fs.place_all(answer.get("files"))  # an OSError reaches the awaiting script
        return found

    def register_sent(self, seq, waiter):
        """Gives a call the host already holds (see `settle_now`) a waiter."""
        self.waiters[seq] = waiter

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
        return _pending_frame(calls, cancelled, wake_after_ns)

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
            value, failed = _settled_value(result)
            if type(waiter) is tuple:
                waiter[0]._settle(waiter[1], value, failed)
            elif not waiter.done():
                if failed:
                    waiter.set_exception(value)
                else:
                    waiter.set_result(value)


def _pending_frame(calls, cancelled, wake_after_ns):
    """What the guest hands the host when it waits: calls as (seq, name, input_json)."""
    return {"kind": "pending", "calls": calls, "cancelled": cancelled, "wake_after_ns": wake_after_ns}


def _settled_value(result):
    """(value, failed) of a host result: [seq, text] or [seq, null, error]."""
    if len(result) > 2:
        return sluice._error_from_host(result[2]), True
    value = result[1]
    return (value if type(value) is str else ""), False


# The one call table; each execution resets it in place, so importers may hold it.
calls = _Calls()
