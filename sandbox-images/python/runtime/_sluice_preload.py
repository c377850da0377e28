"""The standard library the image keeps imported, loaded before the rest of the runtime.

Imported first so that the runtime's own objects, defined after, sit together in memory: a
container's first execution touches them, and every page it touches is a page the
container copies from the image.
"""

import importlib

PRELOADED = (
    "ast asyncio asyncio.taskgroups asyncio.timeouts base64 bisect collections collections.abc copy csv "
    "dataclasses datetime decimal enum fractions functools gc hashlib heapq inspect io itertools json "
    "keyword linecache math operator os random re statistics string textwrap time traceback typing uuid"
)

for _name in PRELOADED.split():
    importlib.import_module(_name)
