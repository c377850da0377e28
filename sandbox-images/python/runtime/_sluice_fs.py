"""The container's file system: a tree held in the guest's own memory, behind `open` and `os`.

WASI gives the guest no directory at all, so nothing a script names can reach the host's
files. Scripts still read and write files, so `open`, `io.open` and the path functions of `os`
are served from this tree instead. Living in linear memory, it is part of the container's
state with nothing added: snapshots, restore after a restart, fork, rollback after a limit
stop and replay keep it exactly, as they keep every Python object.

Layout: `/workspace` (the working directory, where the host places uploaded files and from
where it collects the files an execution created or changed) and `/tmp` (scratch, never
collected). Nothing else exists or can be created. What the files hold counts against the
container's storage limit, their number against `MAX_ENTRIES`.
"""

import binascii
import builtins
import errno
import io
import os
import posixpath
import stat as _stat
import sys
import time
import weakref

# The interpreter's own `open`, for the descriptors of the standard streams (0, 1, 2).
_stream_open = io.open

WORKDIR = "/workspace"
TMPDIR = "/tmp"
# Files and directories a container may hold in all: a script creating millions of empty
# files gets ENOSPC long before they cost the guest's memory.
MAX_ENTRIES = 10_000
MAX_PATH_BYTES = 4_096
MAX_NAME_BYTES = 255
# Storage limit until the host's first request sets one (the host's `storage_bytes`).
DEFAULT_STORAGE_BYTES = 32 << 20
# Changed files one execution hands back to the host; more are named in stderr, not sent.
MAX_OUTPUT_FILES = 100

_DIR_MODE = _stat.S_IFDIR | 0o755
_FILE_MODE = _stat.S_IFREG | 0o644


class _Dir:
    __slots__ = ("children", "mtime", "ino")

    def __init__(self, ino):
        self.children = {}
        self.mtime = time.time()
        self.ino = ino


class _File:
    __slots__ = ("data", "mtime", "ino")

    def __init__(self, ino, data=b""):
        self.data = data
        self.mtime = time.time()
        self.ino = ino


def _error(cls, code, path, detail=None):
    return cls(code, detail or os.strerror(code), path)


def _check_new_name(name, path):
    """A name the host can hand back as it is: UTF-8, no control character (the host's
    `check_file_name` holds files it receives to the same rule)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise _error(OSError, errno.EILSEQ, path, "file names must be valid UTF-8 in this sandbox") from None
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        raise _error(OSError, errno.EINVAL, path, "file names cannot hold control characters in this sandbox")


class FileSystem:
    """The tree, its accounting, and what the current execution changed."""

    def __init__(self):
        self.next_ino = 1
        self.root = _Dir(self._ino())
        self.entries = 1
        self.used_bytes = 0
        self.storage_bytes = DEFAULT_STORAGE_BYTES
        self.changed = set()
        self.cwd = WORKDIR
        for top in (WORKDIR, TMPDIR):
            self.root.children[top[1:]] = _Dir(self._ino())
            self.entries += 1

    def _ino(self):
        self.next_ino += 1
        return self.next_ino - 1

    # -- paths ----------------------------------------------------------------------------
    def absolute(self, path):
        """`path` as an absolute, normalized text path; refuses what no file could be named."""
        if isinstance(path, int):
            raise _error(OSError, errno.EBADF, path, "file descriptors are not available in this sandbox")
        path = os.fspath(path)
        if isinstance(path, bytes):
            path = path.decode("utf-8", "surrogateescape")
        if not isinstance(path, str):
            raise TypeError(f"expected str, bytes or os.PathLike object, not {type(path).__name__}")
        if "\0" in path:
            raise ValueError("embedded null byte")
        if not path:
            raise _error(FileNotFoundError, errno.ENOENT, path)
        if len(path.encode("utf-8", "surrogateescape")) > MAX_PATH_BYTES:
            raise _error(OSError, errno.ENAMETOOLONG, path)
        full = posixpath.normpath(posixpath.join(self.cwd, path))
        if full.startswith("//"):
            full = "/" + full.lstrip("/")
        if len(full.encode("utf-8", "surrogateescape")) > MAX_PATH_BYTES:
            raise _error(OSError, errno.ENAMETOOLONG, path)
        return full

    def _parts(self, full):
        return [p for p in full.split("/") if p]

    def lookup(self, path):
        """The node at `path`, or None."""
        node = self.root
        for part in self._parts(self.absolute(path)):
            if not isinstance(node, _Dir):
                return None
            node = node.children.get(part)
            if node is None:
                return None
        return node

    def parent_of(self, path, for_writing=True):
        """(directory node, name, full path) for creating or replacing the entry at `path`."""
        full = self.absolute(path)
        parts = self._parts(full)
        if not parts:
            raise _error(IsADirectoryError, errno.EISDIR, path)
        name = parts[-1]
        if len(name.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
            raise _error(OSError, errno.ENAMETOOLONG, path)
        if for_writing:
            _check_new_name(name, path)
        node = self.root
        for part in parts[:-1]:
            node = node.children.get(part) if isinstance(node, _Dir) else None
            if node is None:
                raise _error(FileNotFoundError, errno.ENOENT, path)
        if not isinstance(node, _Dir):
            raise _error(NotADirectoryError, errno.ENOTDIR, path)
        if for_writing and (node is self.root or not (full.startswith(WORKDIR + "/") or full.startswith(TMPDIR + "/"))):
            raise _error(PermissionError, errno.EACCES, path, f"only {WORKDIR} and {TMPDIR} are writable")
        return node, name, full

    def _count_new_entry(self, path):
        if self.entries >= MAX_ENTRIES:
            raise _error(OSError, errno.ENOSPC, path, f"No space left on device ({MAX_ENTRIES} files and directories)")
        self.entries += 1

    def _check_room(self, path, grows_by):
        if grows_by > 0 and self.used_bytes + grows_by > self.storage_bytes:
            raise _error(
                OSError, errno.ENOSPC, path, f"No space left on device (storage limit {self.storage_bytes} bytes)"
            )

    # -- files ----------------------------------------------------------------------------
    def read_file(self, path):
        node = self.lookup(path)
        if node is None:
            raise _error(FileNotFoundError, errno.ENOENT, path)
        if isinstance(node, _Dir):
            raise _error(IsADirectoryError, errno.EISDIR, path)
        return node.data

    def write_file(self, path, data, mark_changed=True):
        """Replaces the file's bytes (creating it), within the storage and entry limits."""
        directory, name, full = self.parent_of(path)
        node = directory.children.get(name)
        if isinstance(node, _Dir):
            raise _error(IsADirectoryError, errno.EISDIR, path)
        old = len(node.data) if node is not None else 0
        self._check_room(path, len(data) - old)
        if node is None:
            self._count_new_entry(path)
            node = directory.children[name] = _File(self._ino())
            directory.mtime = time.time()
        node.data = bytes(data)
        node.mtime = time.time()
        self.used_bytes += len(node.data) - old
        if mark_changed:
            self.changed.add(full)
        return node

    def room_for(self, path):
        """Bytes the file at `path` may hold before the storage limit is reached."""
        node = self.lookup(path)
        held = len(node.data) if isinstance(node, _File) else 0
        return self.storage_bytes - self.used_bytes + held

    def remove(self, path):
        directory, name, full = self.parent_of(path)
        node = directory.children.get(name)
        if node is None:
            raise _error(FileNotFoundError, errno.ENOENT, path)
        if isinstance(node, _Dir):
            raise _error(IsADirectoryError, errno.EISDIR, path)
        del directory.children[name]
        self.used_bytes -= len(node.data)
        self.entries -= 1
        self.changed.discard(full)

    def mkdir(self, path):
        directory, name, _ = self.parent_of(path)
        if name in directory.children:
            raise _error(FileExistsError, errno.EEXIST, path)
        self._count_new_entry(path)
        directory.children[name] = _Dir(self._ino())
        directory.mtime = time.time()

    def rmdir(self, path):
        directory, name, _ = self.parent_of(path)
        node = directory.children.get(name)
        if node is None:
            raise _error(FileNotFoundError, errno.ENOENT, path)
        if not isinstance(node, _Dir):
            raise _error(NotADirectoryError, errno.ENOTDIR, path)
        if node.children:
            raise _error(OSError, errno.ENOTEMPTY, path)
        del directory.children[name]
        self.entries -= 1

    def rename(self, source, target, replace=True):
        src_dir, src_name, src_full = self.parent_of(source)
        node = src_dir.children.get(src_name)
        if node is None:
            raise _error(FileNotFoundError, errno.ENOENT, source)
        dst_dir, dst_name, dst_full = self.parent_of(target)
        if dst_full == src_full:
            return
        if isinstance(node, _Dir) and (dst_full + "/").startswith(src_full + "/"):
            raise _error(OSError, errno.EINVAL, source, "cannot move a directory into itself")
        existing = dst_dir.children.get(dst_name)
        if existing is not None:
            if isinstance(existing, _Dir):
                if not isinstance(node, _Dir):
                    raise _error(IsADirectoryError, errno.EISDIR, target)
                if existing.children:
                    raise _error(OSError, errno.ENOTEMPTY, target)
            elif isinstance(node, _Dir):
                raise _error(NotADirectoryError, errno.ENOTDIR, target)
            if isinstance(existing, _File):
                self.used_bytes -= len(existing.data)
            self.entries -= 1
        del src_dir.children[src_name]
        dst_dir.children[dst_name] = node
        src_dir.mtime = dst_dir.mtime = time.time()
        for path in [p for p in self.changed if p == src_full or p.startswith(src_full + "/")]:
            self.changed.discard(path)
        self._mark_tree_changed(dst_full, node)

    def _mark_tree_changed(self, full, node):
        if isinstance(node, _File):
            self.changed.add(full)
            return
        for name, child in node.children.items():
            self._mark_tree_changed(full + "/" + name, child)

    def stat(self, path):
        node = self.lookup(path)
        if node is None:
            raise _error(FileNotFoundError, errno.ENOENT, path)
        return _stat_result(node)

    def listdir(self, path):
        node = self.lookup(path)
        if node is None:
            raise _error(FileNotFoundError, errno.ENOENT, path)
        if not isinstance(node, _Dir):
            raise _error(NotADirectoryError, errno.ENOTDIR, path)
        return sorted(node.children)

    # -- between the host and the script ----------------------------------------------------
    def place(self, name, data):
        """An uploaded file, put into the working directory under its name (a relative path:
        a file an execution wrote under a directory comes back where it was)."""
        parent = posixpath.dirname(WORKDIR + "/" + name)
        if self.lookup(parent) is None:
            _makedirs(parent, exist_ok=True)
        self.write_file(WORKDIR + "/" + name, data, mark_changed=False)

    def outputs(self):
        """Files under the working directory this execution created or changed: (path
        relative to it, bytes), at most `MAX_OUTPUT_FILES`; and how many more there were."""
        if not self.changed:
            return [], 0
        found = []
        for full in sorted(self.changed):
            if not full.startswith(WORKDIR + "/"):
                continue
            node = self.lookup(full)
            if isinstance(node, _File):
                found.append((full[len(WORKDIR) + 1 :], node.data))
        return found[:MAX_OUTPUT_FILES], max(0, len(found) - MAX_OUTPUT_FILES)


def _stat_result(node):
    if isinstance(node, _Dir):
        mode, size, nlink = _DIR_MODE, 4096, 2
    else:
        mode, size, nlink = _FILE_MODE, len(node.data), 1
    t = node.mtime
    return os.stat_result((mode, node.ino, 1, nlink, 0, 0, size, t, t, t))


fs = FileSystem()


def place_all(files):
    """Files from the host, `[name, base64]` each, put into the working directory; all are
    tried, and the first failure is raised after."""
    failure = None
    for name, encoded in files or ():
        try:
            fs.place(name, binascii.a2b_base64(encoded))
        except (OSError, ValueError, binascii.Error) as exc:
            failure = failure or exc
    if failure is not None:
        raise failure


# -- open -----------------------------------------------------------------------------------
class GuestFile(io.BytesIO):
    """A binary file of the tree: its bytes are held here while open and written back to the
    tree on flush and close (as a disk's buffer would be)."""

    def __init__(self, path, name, readable, writable, append, data):
        super().__init__(data)
        self._path = path
        self.name = name
        self._readable = readable
        self._writable = writable
        self._append = append
        self._dirty = False
        if append:
            self.seek(0, io.SEEK_END)

    def readable(self):
        return self._readable

    def writable(self):
        return self._writable

    def _not(self, what):
        raise io.UnsupportedOperation(f"not {what}")

    def read(self, size=-1):
        if not self._readable:
            self._not("readable")
        return super().read(size)

    def read1(self, size=-1):
        if not self._readable:
            self._not("readable")
        return super().read1(size)

    def readline(self, size=-1):
        if not self._readable:
            self._not("readable")
        return super().readline(size)

    def readinto(self, buffer):
        if not self._readable:
            self._not("readable")
        return super().readinto(buffer)

    def write(self, data):
        if not self._writable:
            self._not("writable")
        if self._append:
            self.seek(0, io.SEEK_END)
        end = self.tell() + memoryview(data).nbytes
        if end > fs.room_for(self._path):
            raise _error(
                OSError, errno.ENOSPC, self.name, f"No space left on device (storage limit {fs.storage_bytes} bytes)"
            )
        self._dirty = True
        return super().write(data)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def truncate(self, size=None):
        if not self._writable:
            self._not("writable")
        self._dirty = True
        return super().truncate(size)

    def fileno(self):
        raise io.UnsupportedOperation("files of this sandbox have no file descriptor")

    def isatty(self):
        return False

    def flush(self):
        if self.closed:
            raise ValueError("I/O operation on closed file.")
        if self._dirty:
            fs.write_file(self._path, self.getvalue())
            self._dirty = False

    def close(self):
        if not self.closed:
            try:
                self.flush()
            finally:
                super().close()

    def __repr__(self):
        return f"<sluice file name={self.name!r}>"


# Open files that write, so the end of an execution can write back what a script left open.
open_writers = weakref.WeakSet()


def _parse_mode(mode):
    if not isinstance(mode, str):
        raise TypeError(f"open() argument 'mode' must be str, not {type(mode).__name__}")
    chars = set(mode)
    if len(chars) != len(mode) or not chars <= set("rwxabt+") or len(chars & set("rwxa")) != 1:
        raise ValueError(f"invalid mode: {mode!r}")
    if "b" in chars and "t" in chars:
        raise ValueError("can't have text and binary mode at once")
    return chars


def open(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None, closefd=True, opener=None):
    """`open` over the container's tree (same signature and errors as the built-in)."""
    if isinstance(file, int) and file in (0, 1, 2):
        return _stream_open(file, mode, buffering, encoding, errors, newline, closefd)
    chars = _parse_mode(mode)
    binary = "b" in chars
    if binary and encoding is not None:
        raise ValueError("binary mode doesn't take an encoding argument")
    if binary and errors is not None:
        raise ValueError("binary mode doesn't take an errors argument")
    if binary and newline is not None:
        raise ValueError("binary mode doesn't take a newline argument")
    if opener is not None:
        raise _error(OSError, errno.ENOTSUP, file, "open() with an opener is not available in this sandbox")
    name = file
    path = fs.absolute(file)
    node = fs.lookup(path)
    if isinstance(node, _Dir):
        raise _error(IsADirectoryError, errno.EISDIR, name)
    if "x" in chars and node is not None:
        raise _error(FileExistsError, errno.EEXIST, name)
    if "r" in chars and node is None:
        raise _error(FileNotFoundError, errno.ENOENT, name)
    writable = "+" in chars or not ("r" in chars)
    readable = "r" in chars or "+" in chars
    if writable:
        fs.parent_of(path)  # refuses read-only places before anything is written
    if "w" in chars or "x" in chars or node is None:
        fs.write_file(path, b"")
        data = b""
    else:
        data = node.data
    raw = GuestFile(path, name, readable, writable, "a" in chars, data)
    if binary:
        result = raw
    else:
        result = io.TextIOWrapper(raw, encoding or "utf-8", errors, newline, line_buffering=buffering == 1)
        try:
            result.mode = mode
        except AttributeError:
            pass
    if writable:
        open_writers.add(result)
    return result


def flush_open_files():
    """Writes back what files left open hold, as the end of an execution needs it."""
    if not open_writers.data:
        return  # no file open for writing: most executions (the weak set's own length is Python)
    for handle in list(open_writers):
        try:
            if not handle.closed:
                handle.flush()
        except Exception as exc:  # noqa: BLE001 - a file that cannot flush keeps its old bytes
            sys.stderr.write(f"[sluice: an open file could not be written back: {exc}]\n")


# -- os -------------------------------------------------------------------------------------
class DirEntry:
    """What `os.scandir` yields."""

    __slots__ = ("name", "path", "_node")

    def __init__(self, directory, name, node):
        self.name = name
        self.path = directory.rstrip("/") + "/" + name if directory not in ("", ".") else name
        self._node = node

    def is_dir(self, *, follow_symlinks=True):
        return isinstance(self._node, _Dir)

    def is_file(self, *, follow_symlinks=True):
        return isinstance(self._node, _File)

    def is_symlink(self):
        return False

    def is_junction(self):
        return False

    def stat(self, *, follow_symlinks=True):
        return _stat_result(self._node)

    def inode(self):
        return self._node.ino

    def __fspath__(self):
        return self.path

    def __repr__(self):
        return f"<DirEntry {self.name!r}>"


class _ScandirIterator:
    def __init__(self, entries):
        self._entries = iter(entries)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._entries)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._entries = iter(())


def scandir(path="."):
    shown = os.fspath(path)
    node = fs.lookup(path)
    if node is None:
        raise _error(FileNotFoundError, errno.ENOENT, path)
    if not isinstance(node, _Dir):
        raise _error(NotADirectoryError, errno.ENOTDIR, path)
    as_bytes = isinstance(shown, bytes)
    base = shown.decode("utf-8", "surrogateescape") if as_bytes else shown
    entries = [DirEntry(base, name, child) for name, child in sorted(node.children.items())]
    return _ScandirIterator(entries)


def _no_descriptors(name):
    def refuse(*args, **kwargs):
        raise _error(OSError, errno.ENOTSUP, None, f"os.{name} is not available in this sandbox (no file descriptors)")

    refuse.__name__ = name
    return refuse


def _no_links(*args, **kwargs):
    raise _error(PermissionError, errno.EPERM, None, "links are not available in this sandbox's file system")


def _makedirs(name, mode=0o777, exist_ok=False):
    head, tail = posixpath.split(fs.absolute(name))
    if not tail:
        head, tail = posixpath.split(head)
    if head and tail and fs.lookup(head) is None:
        _makedirs(head, exist_ok=True)
    try:
        fs.mkdir(name)
    except OSError:
        if not exist_ok or not isinstance(fs.lookup(name), _Dir):
            raise


def _chdir(path):
    node = fs.lookup(path)
    if node is None:
        raise _error(FileNotFoundError, errno.ENOENT, path)
    if not isinstance(node, _Dir):
        raise _error(NotADirectoryError, errno.ENOTDIR, path)
    fs.cwd = fs.absolute(path)


def _utime(path, times=None, *, ns=None, dir_fd=None, follow_symlinks=True):
    node = fs.lookup(path)
    if node is None:
        raise _error(FileNotFoundError, errno.ENOENT, path)
    if ns is not None:
        node.mtime = ns[1] / 1e9
    elif times is not None:
        node.mtime = times[1]
    else:
        node.mtime = time.time()


def _chmod(path, mode, *, dir_fd=None, follow_symlinks=True):
    if fs.lookup(path) is None:
        raise _error(FileNotFoundError, errno.ENOENT, path)


def _access(path, mode, *, dir_fd=None, effective_ids=False, follow_symlinks=True):
    return fs.lookup(path) is not None


def _truncate(path, length):
    data = fs.read_file(path)
    fs.write_file(path, data[:length] + b"\0" * max(0, length - len(data)))


def _listdir(path="."):
    names = fs.listdir(path)
    if isinstance(os.fspath(path), bytes):
        return [n.encode("utf-8", "surrogateescape") for n in names]
    return names


def _readlink(path, *, dir_fd=None):
    if fs.lookup(path) is None:
        raise _error(FileNotFoundError, errno.ENOENT, path)
    raise _error(OSError, errno.EINVAL, path)


def _touch(self, mode=0o666, exist_ok=True):
    """`pathlib.Path.touch`, which would otherwise need `os.open`."""
    node = fs.lookup(self)
    if node is None:
        fs.write_file(self, b"")
    elif not exist_ok:
        raise _error(FileExistsError, errno.EEXIST, os.fspath(self))
    else:
        node.mtime = time.time()


def _getcwdb():
    return fs.cwd.encode()


def install():
    """Puts the tree behind `open`, `io.open` and the path functions of `os`."""
    builtins.open = io.open = open
    plain = {
        "stat": lambda path, *, dir_fd=None, follow_symlinks=True: fs.stat(path),
        "lstat": lambda path, *, dir_fd=None: fs.stat(path),
        "listdir": _listdir,
        "scandir": scandir,
        "mkdir": lambda path, mode=0o777, *, dir_fd=None: fs.mkdir(path),
        "makedirs": _makedirs,
        "rmdir": lambda path, *, dir_fd=None: fs.rmdir(path),
        "remove": lambda path, *, dir_fd=None: fs.remove(path),
        "unlink": lambda path, *, dir_fd=None: fs.remove(path),
        "rename": lambda src, dst, *, src_dir_fd=None, dst_dir_fd=None: fs.rename(src, dst),
        "replace": lambda src, dst, *, src_dir_fd=None, dst_dir_fd=None: fs.rename(src, dst),
        "getcwd": lambda: fs.cwd,
        "getcwdb": _getcwdb,
        "chdir": _chdir,
        "utime": _utime,
        "chmod": _chmod,
        "access": _access,
        "truncate": _truncate,
        "symlink": _no_links,
        "link": _no_links,
        "readlink": _readlink,
    }
    for name, function in plain.items():
        if getattr(function, "__name__", "<lambda>") == "<lambda>":
            function.__name__ = name
        setattr(os, name, function)
    # Descriptors of the standard streams still work; none can name a file of the tree.
    os.open = _no_descriptors("open")
    import pathlib

    pathlib.Path.touch = _touch
    os.supports_fd = set()
    os.supports_dir_fd = set()
    os.supports_follow_symlinks = set()
    os.supports_effective_ids = set()
