"""`_sqlite3` for scripts: CPython 3.11's DB-API over the SQLite compiled into the guest.

The standard `sqlite3` package imports this module as it would CPython's C extension. The
C calls are in `_sluice_sqlite` (the guest's Rust); connections, cursors, implicit
transactions, rows, adapters, converters and the exception hierarchy are here. Databases
live in the container's memory: `:memory:` (and `file:...?mode=memory` URIs) only, since the
sandbox has no files.
"""

import os

import _sluice_sqlite as _native

version = "2.6.0"
sqlite_version = _native.sqlite_version()

PARSE_DECLTYPES = 1
PARSE_COLNAMES = 2

# Result codes (primary and the extended ones scripts meet), for `sqlite_errorname`.
_ERROR_NAMES = {
    0: "SQLITE_OK", 1: "SQLITE_ERROR", 2: "SQLITE_INTERNAL", 3: "SQLITE_PERM", 4: "SQLITE_ABORT",
    5: "SQLITE_BUSY", 6: "SQLITE_LOCKED", 7: "SQLITE_NOMEM", 8: "SQLITE_READONLY",
    9: "SQLITE_INTERRUPT", 10: "SQLITE_IOERR", 11: "SQLITE_CORRUPT", 12: "SQLITE_NOTFOUND",
    13: "SQLITE_FULL", 14: "SQLITE_CANTOPEN", 15: "SQLITE_PROTOCOL", 16: "SQLITE_EMPTY",
    17: "SQLITE_SCHEMA", 18: "SQLITE_TOOBIG", 19: "SQLITE_CONSTRAINT", 20: "SQLITE_MISMATCH",
    21: "SQLITE_MISUSE", 22: "SQLITE_NOLFS", 23: "SQLITE_AUTH", 24: "SQLITE_FORMAT",
    25: "SQLITE_RANGE", 26: "SQLITE_NOTADB", 27: "SQLITE_NOTICE", 28: "SQLITE_WARNING",
    100: "SQLITE_ROW", 101: "SQLITE_DONE",
    257: "SQLITE_ERROR_MISSING_COLLSEQ", 513: "SQLITE_ERROR_RETRY", 769: "SQLITE_ERROR_SNAPSHOT",
    516: "SQLITE_ABORT_ROLLBACK", 275: "SQLITE_CONSTRAINT_CHECK", 531: "SQLITE_CONSTRAINT_COMMITHOOK",
    787: "SQLITE_CONSTRAINT_FOREIGNKEY", 1043: "SQLITE_CONSTRAINT_FUNCTION",
    1299: "SQLITE_CONSTRAINT_NOTNULL", 1555: "SQLITE_CONSTRAINT_PRIMARYKEY",
    1811: "SQLITE_CONSTRAINT_TRIGGER", 2067: "SQLITE_CONSTRAINT_UNIQUE",
    2323: "SQLITE_CONSTRAINT_VTAB", 2579: "SQLITE_CONSTRAINT_ROWID",
    2835: "SQLITE_CONSTRAINT_PINNED", 3091: "SQLITE_CONSTRAINT_DATATYPE",
}
globals().update({name: code for code, name in _ERROR_NAMES.items()})

# Authorizer answers and limit categories, as CPython exports them.
SQLITE_DENY = 1
SQLITE_IGNORE = 2
for _number, _name in enumerate(
    "LENGTH SQL_LENGTH COLUMN EXPR_DEPTH COMPOUND_SELECT VDBE_OP FUNCTION_ARG ATTACHED "
    "LIKE_PATTERN_LENGTH VARIABLE_NUMBER TRIGGER_DEPTH WORKER_THREADS".split()
):
    globals()["SQLITE_LIMIT_" + _name] = _number
del _number, _name


class Warning(Exception):
    pass


class Error(Exception):
    sqlite_errorcode = None
    sqlite_errorname = None


class InterfaceError(Error):
    pass


class DatabaseError(Error):
    pass


class InternalError(DatabaseError):
    pass


class OperationalError(DatabaseError):
    pass


class ProgrammingError(DatabaseError):
    pass


class IntegrityError(DatabaseError):
    pass


class DataError(DatabaseError):
    pass


class NotSupportedError(DatabaseError):
    pass


for _class in (Warning, Error, InterfaceError, DatabaseError, InternalError, OperationalError,
               ProgrammingError, IntegrityError, DataError, NotSupportedError):
    _class.__module__ = "sqlite3"
del _class

_CLASS_BY_PRIMARY_CODE = {
    2: InternalError, 12: InternalError, 11: DatabaseError, 18: DataError, 19: IntegrityError,
    20: IntegrityError, 21: InterfaceError, 25: InterfaceError,
}
_OPERATIONAL_CODES = frozenset((1, 3, 4, 5, 6, 8, 9, 10, 13, 14, 15, 16, 17, 23, 26))


def _make_error(class_name, code, message):
    """Called by `_sluice_sqlite` for every failure: the exception CPython would raise."""
    if class_name:
        return globals()[class_name](message)
    primary = code & 0xFF
    if primary == 7:
        return MemoryError()
    if primary in _OPERATIONAL_CODES:
        error = OperationalError(message)
    else:
        error = _CLASS_BY_PRIMARY_CODE.get(primary, DatabaseError)(message)
    error.sqlite_errorcode = code
    error.sqlite_errorname = _ERROR_NAMES.get(code) or _ERROR_NAMES.get(primary, "SQLITE_UNKNOWN")
    return error


_native.set_error_factory(_make_error)


class PrepareProtocol:
    """The protocol objects adapt to (`__conform__(PrepareProtocol)`)."""


adapters = {}
converters = {}
_callback_tracebacks = False


def register_adapter(type, adapter, /):
    adapters[(type, PrepareProtocol)] = adapter


def register_converter(typename, converter, /):
    converters[typename.upper()] = converter


def enable_callback_tracebacks(enable, /):
    global _callback_tracebacks
    _callback_tracebacks = bool(enable)


_MISSING = object()


def adapt(obj, proto=PrepareProtocol, alt=_MISSING, /):
    adapter = adapters.get((type(obj), proto))
    if adapter is not None:
        return adapter(obj)
    conform = getattr(proto, "__adapt__", None)
    if conform is not None:
        adapted = conform(obj)
        if adapted is not None:
            return adapted
    conform = getattr(obj, "__conform__", None)
    if conform is not None:
        adapted = conform(proto)
        if adapted is not None:
            return adapted
    if alt is not _MISSING:
        return alt
    raise ProgrammingError("can't adapt")


def _adapt_for_binding(value, index):
    """Called by `_sluice_sqlite` for a parameter SQLite cannot hold as it is."""
    adapted = adapt(value, PrepareProtocol, value)
    return adapted.tobytes() if isinstance(adapted, memoryview) else adapted


def complete_statement(statement):
    return _native.complete_statement(statement)


def _skip_space_and_comments(sql, start=0):
    """The index of the first character of `sql` after `start` that is not blank or comment."""
    i, n = start, len(sql)
    while i < n:
        c = sql[i]
        if c in " \t\n\r\f;":
            i += 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end + 1
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            return i
    return n


_DML = ("INSERT", "UPDATE", "DELETE", "REPLACE")


def _is_dml(sql):
    start = _skip_space_and_comments(sql)
    return sql[start : start + 7].upper().startswith(_DML)


_ISOLATION_LEVELS = ("", "DEFERRED", "IMMEDIATE", "EXCLUSIVE")


def _checked_isolation_level(level):
    if level is None:
        return None
    if not isinstance(level, str):
        raise TypeError("isolation_level must be str or None")
    if level.upper() not in _ISOLATION_LEVELS:
        raise ValueError("isolation_level string must be '', 'DEFERRED', 'IMMEDIATE', or 'EXCLUSIVE'")
    return level


class _Statement:
    """A prepared statement and what the cursor needs to know about it."""

    __slots__ = ("native", "sql", "is_dml", "columns", "in_use")

    def __init__(self, native, sql):
        self.native = native
        self.sql = sql
        self.is_dml = _is_dml(sql)
        self.columns = native.columns()
        self.in_use = False


class Connection:
    Warning = Warning
    Error = Error
    InterfaceError = InterfaceError
    DatabaseError = DatabaseError
    InternalError = InternalError
    OperationalError = OperationalError
    ProgrammingError = ProgrammingError
    IntegrityError = IntegrityError
    DataError = DataError
    NotSupportedError = NotSupportedError

    def __init__(self, database, timeout=5.0, detect_types=0, isolation_level="",
                 check_same_thread=True, factory=None, cached_statements=128, uri=False):
        if isinstance(database, bytes):
            database = database.decode()
        database = os.fspath(database)
        self._db = _native.open(database, bool(uri))
        self._isolation_level = _checked_isolation_level(isolation_level)
        self.detect_types = int(detect_types)
        self._cache = {}
        self._cache_size = max(0, int(cached_statements))
        self.row_factory = None
        self.text_factory = str

    # -- state ---------------------------------------------------------------------------
    def _check(self):
        if self._db is None:
            raise ProgrammingError("Cannot operate on a closed database.")
        return self._db

    @property
    def isolation_level(self):
        return self._isolation_level

    @isolation_level.setter
    def isolation_level(self, level):
        level = _checked_isolation_level(level)
        if level is None and self.in_transaction:
            self.commit()
        self._isolation_level = level

    @property
    def in_transaction(self):
        return self._check().in_transaction()

    @property
    def total_changes(self):
        return self._check().total_changes()

    # -- statements ----------------------------------------------------------------------
    def _statement(self, sql):
        """A prepared statement for `sql`, from the cache when one is free."""
        if not isinstance(sql, str):
            raise TypeError(f"execute() argument 1 must be str, not {type(sql).__name__}")
        db = self._check()
        cached = self._cache.get(sql)
        if cached is not None and not cached.in_use:
            return cached  # reset when its last cursor released it; `bind` resets again
        native, rest = db.prepare(sql)
        if native is not None and _skip_space_and_comments(rest) < len(rest):
            native.finalize()
            raise ProgrammingError("You can only execute one statement at a time.")
        if native is None:
            return None
        statement = _Statement(native, sql)
        if cached is None and self._cache_size:
            if len(self._cache) >= self._cache_size:
                del self._cache[next(iter(self._cache))]
            self._cache[sql] = statement
        return statement

    def _begin_if_needed(self, statement):
        if statement.is_dml and self._isolation_level is not None and not self._db.in_transaction():
            self._db.execute_script("BEGIN " + self._isolation_level)

    # -- the DB-API ----------------------------------------------------------------------
    def cursor(self, factory=None):
        self._check()
        cursor = (factory or Cursor)(self)
        if not isinstance(cursor, Cursor):
            raise TypeError("factory must return a cursor, not " + type(cursor).__name__)
        if self.row_factory is not None and cursor.row_factory is None:
            cursor.row_factory = self.row_factory
        return cursor

    def execute(self, sql, parameters=(), /):
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql, parameters, /):
        return self.cursor().executemany(sql, parameters)

    def executescript(self, sql_script, /):
        return self.cursor().executescript(sql_script)

    def commit(self):
        if self._check().in_transaction():
            self._db.execute_script("COMMIT")

    def rollback(self):
        if self._check().in_transaction():
            self._db.execute_script("ROLLBACK")

    def close(self):
        if self._db is not None:
            for statement in self._cache.values():
                statement.native.finalize()
            self._cache.clear()
            self._db.close()
            self._db = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        if exc_type is None:
            self.commit()
        else:
            self.rollback()
        return False

    def __call__(self, sql):
        statement = self._statement(sql)
        return statement.native if statement else None

    def create_function(self, name, narg, func, *, deterministic=False):
        self._check().create_function(name, narg, func, bool(deterministic))

    def create_aggregate(self, name, n_arg, aggregate_class):
        self._check().create_aggregate(name, n_arg, aggregate_class)

    def create_collation(self, name, callback, /):
        if callback is not None and not callable(callback):
            raise TypeError("parameter must be callable")
        self._check().create_collation(name, callback)

    def create_window_function(self, name, num_params, aggregate_class, /):
        raise NotSupportedError("create_window_function() is not available in the sandbox")

    def set_authorizer(self, authorizer_callback):
        raise NotSupportedError("set_authorizer() is not available in the sandbox")

    def set_progress_handler(self, progress_handler, n):
        raise NotSupportedError("set_progress_handler() is not available in the sandbox")

    def set_trace_callback(self, trace_callback):
        raise NotSupportedError("set_trace_callback() is not available in the sandbox")

    def interrupt(self):
        self._check().interrupt()

    def getlimit(self, category, /):
        return self._check().limit(category, -1)

    def setlimit(self, category, limit, /):
        return self._check().limit(category, limit)

    def serialize(self, *, name="main"):
        return self._check().serialize(name)

    def deserialize(self, data, /, *, name="main"):
        self._check().deserialize(data, name)

    def backup(self, target, *, pages=-1, progress=None, name="main", sleep=0.250):
        if not isinstance(target, Connection):
            raise TypeError("target must be a Connection")
        target._check().deserialize(self._check().serialize(name), "main")
        if progress is not None:
            progress(0, 0, 0)

    def iterdump(self):
        from sqlite3.dump import _iterdump

        return _iterdump(self)


class Cursor:
    def __init__(self, connection, /):
        if not isinstance(connection, Connection):
            raise TypeError("argument must be a Connection")
        self.connection = connection
        self.arraysize = 1
        self.row_factory = None
        self.description = None
        self.rowcount = -1
        self.lastrowid = None
        self._statement = None
        self._columns = ()
        self._next = None
        self._closed = False

    def _check(self):
        if self._closed:
            raise ProgrammingError("Cannot operate on a closed cursor.")
        self.connection._check()

    def _release(self):
        statement, self._statement, self._next = self._statement, None, None
        if statement is not None:
            statement.native.reset()
            statement.in_use = False

    def _text_as_bytes(self):
        return self.connection.text_factory is not str

    def _bind(self, statement, parameters):
        if not isinstance(parameters, (tuple, list, dict)):
            if hasattr(parameters, "keys") and hasattr(parameters, "__getitem__"):
                parameters = {key: parameters[key] for key in parameters.keys()}
            else:
                try:
                    parameters = tuple(parameters)
                except TypeError:
                    raise ProgrammingError("parameters are of unsupported type") from None
        statement.native.bind(parameters, _adapt_for_binding)

    def _start(self, sql):
        """The cursor's statement for `sql` (None for a blank one), its last one released."""
        self._check()
        self._release()
        self.rowcount = -1
        return self.connection._statement(sql)

    def execute(self, sql, parameters=(), /):
        connection = self.connection
        statement = self._start(sql)
        if statement is None:
            self.description = None
            return self
        statement.in_use = True
        self._statement = statement
        self._columns = statement.columns
        try:
            self._bind(statement, parameters)
            connection._begin_if_needed(statement)
            self._next = statement.native.step(self._text_as_bytes())
        except BaseException:
            self._release()
            raise
        self.description = self._description(statement)
        if statement.is_dml:
            self.rowcount = connection._db.changes()
        self.lastrowid = connection._db.last_insert_rowid()
        if self._next is None:
            self._release()
        return self

    def executemany(self, sql, seq_of_parameters, /):
        connection = self.connection
        statement = self._start(sql)
        if statement is None:
            return self
        if statement.columns:
            raise ProgrammingError("executemany() can only execute DML statements.")
        statement.in_use = True
        self._statement = statement
        total = 0
        try:
            for parameters in seq_of_parameters:
                self._bind(statement, parameters)
                connection._begin_if_needed(statement)
                statement.native.step(False)
                if statement.is_dml:
                    total += connection._db.changes()
        finally:
            self._release()
        self.description = None
        if statement.is_dml:
            self.rowcount = total
        return self

    def executescript(self, sql_script, /):
        self._check()
        self._release()
        if not isinstance(sql_script, str):
            raise ValueError("script argument must be unicode.")
        connection = self.connection
        if connection._isolation_level is not None and connection.in_transaction:
            connection.commit()
        connection._db.execute_script(sql_script)
        self.description = None
        self.rowcount = -1
        return self

    def _description(self, statement):
        if not statement.columns:
            return None
        names = [name for name, _ in statement.columns]
        if self.connection.detect_types & PARSE_COLNAMES:
            names = [name.partition(" [")[0] if name.endswith("]") else name for name in names]
        return tuple((name, None, None, None, None, None, None) for name in names)

    def _convert(self, row):
        connection = self.connection
        if connection.detect_types and converters:
            row = self._apply_converters(row)
        factory = connection.text_factory
        if factory is not str and factory is not bytes:
            row = tuple(factory(value) if isinstance(value, bytes) and declared != "BLOB" else value
                        for value, declared in zip(row, self._declared_types()))
        if self.row_factory is not None:
            return self.row_factory(self, row)
        return row

    def _declared_types(self):
        return [(declared or "").upper() for _, declared in self._columns]

    def _apply_converters(self, row):
        detect = self.connection.detect_types
        converted = []
        for value, (name, declared) in zip(row, self._columns):
            converter = None
            if detect & PARSE_COLNAMES and name.endswith("]") and " [" in name:
                converter = converters.get(name[name.rindex("[") + 1 : -1].upper())
            if converter is None and detect & PARSE_DECLTYPES and declared:
                converter = converters.get(declared.split("(")[0].split()[0].upper())
            if converter is not None and value is not None:
                if not isinstance(value, bytes):
                    value = str(value).encode()
                value = converter(value)
            converted.append(value)
        return tuple(converted)

    def fetchone(self):
        self._check()
        row = self._next
        if row is None:
            return None
        try:
            self._next = self._statement.native.step(self._text_as_bytes())
        except BaseException:
            self._release()
            raise
        if self._next is None:
            self._release()
        return self._convert(row)

    def fetchmany(self, size=None):
        if size is None:
            size = self.arraysize
        rows = []
        while len(rows) < size:
            row = self.fetchone()
            if row is None:
                break
            rows.append(row)
        return rows

    def fetchall(self):
        self._check()
        if self._next is None:
            return []
        try:
            rows = [self._next]
            rows.extend(self._statement.native.fetch(-1, self._text_as_bytes()))
        finally:
            self._release()
        plain = self.row_factory is None and self.connection.text_factory in (str, bytes)
        if plain and not (self.connection.detect_types and converters):
            return rows
        return [self._convert(row) for row in rows]

    def __iter__(self):
        return self

    def __next__(self):
        row = self.fetchone()
        if row is None:
            raise StopIteration
        return row

    def close(self):
        self._release()
        self._closed = True

    def __del__(self):
        # A cursor dropped mid-result frees its statement, as CPython's does: an unfinished
        # read would otherwise keep its table locked.
        try:
            self._release()
        except Exception:
            pass

    def setinputsizes(self, sizes, /):
        pass

    def setoutputsize(self, size, column=None, /):
        pass


class Row:
    """A result row addressable by position or, case-insensitively, by column name."""

    __slots__ = ("_names", "_values")

    def __init__(self, cursor, data, /):
        if not isinstance(cursor, Cursor):
            raise TypeError("Row() argument 1 must be sqlite3.Cursor")
        description = cursor.description or ()
        self._names = tuple(column[0] for column in description)
        self._values = tuple(data)

    def keys(self):
        return list(self._names)

    def __len__(self):
        return len(self._values)

    def __iter__(self):
        return iter(self._values)

    def __getitem__(self, key):
        if isinstance(key, str):
            folded = key.upper()
            for name, value in zip(self._names, self._values):
                if name.upper() == folded:
                    return value
            raise IndexError("No item with that key")
        return self._values[key]

    def __eq__(self, other):
        if not isinstance(other, Row):
            return NotImplemented
        return self._names == other._names and self._values == other._values

    def __hash__(self):
        return hash(self._names) ^ hash(self._values)


Row.__module__ = "sqlite3"
Connection.__module__ = "sqlite3"
Cursor.__module__ = "sqlite3"
PrepareProtocol.__module__ = "sqlite3"


def connect(database, timeout=5.0, detect_types=0, isolation_level="", check_same_thread=True,
            factory=Connection, cached_statements=128, uri=False):
    return factory(database, timeout, detect_types, isolation_level, check_same_thread, factory,
                   cached_statements, uri)
