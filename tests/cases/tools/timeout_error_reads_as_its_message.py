# sluice: answers = {"lookup": "ok"}
import sluice
# A timeout from the host: an OSError subclass must not read its (message, code) as
# (errno, strerror), which printed "[Errno no answer within 200 ms] timeout".
error = sluice._error_from_host({"code": "timeout", "message": "no answer within 200 ms"})
print(type(error).__name__, isinstance(error, TimeoutError), error.code)
print(str(error))
try:
    raise error
except TimeoutError as caught:
    print(f"caught: {caught}")
