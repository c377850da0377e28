# sluice: stop = "guest_fault"
import _sluice_abi
# A blocking wait with a frame that is not a pending frame.
_sluice_abi.wait({"kind": "done", "return_code": 0})
