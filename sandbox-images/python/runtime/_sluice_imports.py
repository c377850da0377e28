"""Modules the image holds but does not import until a script does, and the `tzdata` package.

Lazy modules (`_sqlite3` and the like) are compiled once, when the image is made, and run
only when a script imports them: a container that never uses SQLite never pays for it.
`tzdata` is the IANA time zone database as the package of that name lays it out, read from
the data compiled into the guest, so `zoneinfo` finds every zone offline, and always the same.
"""

import io
import sys
import time

import _sluice_abi

_TZDATA = "tzdata"
_TZDATA_ZONES = "tzdata.zoneinfo"


class _LazyLoader:
    """Runs a module compiled when the image was made."""

    def __init__(self, codes):
        self._codes = codes

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self._codes[module.__name__], module.__dict__)


class _ZoneFile:
    """One entry of the `tzdata` package: a directory of zones or a zone's TZif bytes."""

    def __init__(self, path):
        self._path = path

    @property
    def name(self):
        return self._path.rpartition("/")[2]

    def _data(self):
        if self._path == "zones":
            return ("\n".join(sorted(_zone_names())) + "\n").encode()
        if not self._path.startswith("zoneinfo/") or self._path[9:] not in _zone_names():
            return None
        return _sluice_abi.tzdata(self._path[9:])

    def joinpath(self, *parts):
        path = "/".join([self._path, *parts]) if self._path else "/".join(parts)
        return _ZoneFile(path)

    __truediv__ = joinpath

    def is_file(self):
        return self._data() is not None

    def is_dir(self):
        prefix = self._path[9:] + "/" if self._path.startswith("zoneinfo/") else None
        if self._path in ("", "zoneinfo"):
            return True
        return prefix is not None and any(name.startswith(prefix) for name in _zone_names())

    def iterdir(self):
        prefix = self._path[9:] + "/" if self._path.startswith("zoneinfo/") else ""
        children = sorted({name[len(prefix) :].partition("/")[0] for name in _zone_names() if name.startswith(prefix)})
        return iter([self.joinpath(child) for child in children])

    def read_bytes(self):
        data = self._data()
        if data is None:
            raise FileNotFoundError(f"No such resource: {self._path}")
        return data

    def read_text(self, encoding="utf-8"):
        return self.read_bytes().decode(encoding)

    def open(self, mode="r", *args, **kwargs):
        data = self.read_bytes()
        if "b" in mode:
            return io.BytesIO(data)
        return io.TextIOWrapper(io.BytesIO(data), *args, **kwargs)


class _ZoneReader:
    def __init__(self, path):
        self._path = path

    def files(self):
        return _ZoneFile(self._path)


class _TzdataLoader:
    """`tzdata` and its `zoneinfo.<Area>` packages, with resources and no files."""

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__path__ = []
        if module.__name__ == _TZDATA:
            module.IANA_VERSION = _sluice_abi.tzdata_version()

    def get_resource_reader(self, fullname):
        return _ZoneReader(fullname[len(_TZDATA) + 1 :].replace(".", "/"))


_zone_name_set = None


def _zone_names():
    global _zone_name_set
    if _zone_name_set is None:
        _zone_name_set = frozenset(_sluice_abi.tzdata_names())
    return _zone_name_set


def _patch_zoneinfo_common(module):
    """Zone files straight from the guest's data: `importlib.resources`, which the standard
    `load_tzdata` goes through, costs a script about 20 ms to import."""
    not_found = module.ZoneInfoNotFoundError

    def load_tzdata(key):
        data = _sluice_abi.tzdata(key) if isinstance(key, str) else None
        if data is None:
            raise not_found(f"No time zone found with key {key}")
        return io.BytesIO(data)

    module.load_tzdata = load_tzdata


def _patch_zoneinfo_tzpath(module):
    def available_timezones():
        """Returns a set containing all available time zones."""
        return set(_zone_names())

    module.available_timezones = available_timezones


# Standard modules adjusted right after they load (before anything imports from them).
_AFTER_LOAD = {"zoneinfo._common": _patch_zoneinfo_common, "zoneinfo._tzpath": _patch_zoneinfo_tzpath}


class _PatchingLoader:
    """Loads a standard module with its own loader, then adjusts it."""

    def __init__(self, loader, patch):
        self._loader = loader
        self._patch = patch

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._patch(module)


class _Finder:
    def __init__(self, codes):
        self._lazy = _LazyLoader(codes)
        self._tzdata = _TzdataLoader()

    def _patched_spec(self, fullname, path, target):
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                spec.loader = _PatchingLoader(spec.loader, _AFTER_LOAD[fullname])
                return spec
        return None

    def find_spec(self, fullname, path=None, target=None):
        from importlib.machinery import ModuleSpec

        if fullname in _AFTER_LOAD:
            return self._patched_spec(fullname, path, target)
        if fullname in self._lazy._codes:
            return ModuleSpec(fullname, self._lazy, origin="<sluice:" + fullname + ">")
        if fullname == _TZDATA or fullname == _TZDATA_ZONES:
            return ModuleSpec(fullname, self._tzdata, is_package=True)
        if fullname.startswith(_TZDATA_ZONES + "."):
            area = fullname[len(_TZDATA_ZONES) + 1 :].replace(".", "/") + "/"
            if any(name.startswith(area) for name in _zone_names()):
                return ModuleSpec(fullname, self._tzdata, is_package=True)
        return None


def _fix_time_module():
    """The guest's local time is UTC: `time` says so as CPython's does (`_strptime` reads it).

    RustPython's `gmtime` and `localtime` count `tm_wday` from Sunday on WASI; Python counts
    from Monday (its `strftime` there works from the date, not from `tm_wday`).
    """
    for name, value in (("tzname", ("UTC", "UTC")), ("timezone", 0), ("altzone", 0), ("daylight", 0)):
        if not hasattr(time, name):
            setattr(time, name, value)
    if time.gmtime(0).tm_wday == 3:
        return
    struct_time = time.struct_time

    def monday_first(convert):
        def converted(*args):
            t = convert(*args)
            return struct_time((*t[:6], (t.tm_wday + 6) % 7, *t[7:9], t.tm_zone, t.tm_gmtoff))

        converted.__name__ = convert.__name__
        converted.__doc__ = convert.__doc__
        return converted

    time.gmtime = monday_first(time.gmtime)
    time.localtime = monday_first(time.localtime)


def install(lazy_modules):
    """Compiles the lazy modules and puts their finder first on `sys.meta_path`."""
    codes = {name: compile(source, "<sluice:" + name + ">", "exec") for name, source in lazy_modules}
    sys.meta_path.insert(0, _Finder(codes))
    _fix_time_module()
