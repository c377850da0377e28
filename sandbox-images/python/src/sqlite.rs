//! SQLite compiled into the guest: its OS layer, and `_sluice_sqlite`, the primitives `_sqlite3` is built on.
//!
//! The DB-API itself (connections, cursors, transactions, rows, exceptions) is Python in the
//! runtime (`runtime/_sqlite3.py`); this module only crosses into C: open, prepare, bind,
//! step, read columns, and call Python back for user functions, aggregates and collations.
//! SQLite is built with `SQLITE_OS_OTHER`: the only OS layer is the one below, so it has no
//! files, and its randomness and clock are the sandbox's own (seeded and virtual), which
//! keeps replays exact.

use libsqlite3_sys as ffi;
use std::ffi::{c_char, c_int, c_void};

/// The guest's VFS: in-memory databases only; randomness and time from the sandbox.
mod vfs {
    use super::{c_char, c_int, c_void, ffi};
    use std::ptr;

    /// The most bytes one `getentropy` call fills (POSIX).
    const GETENTROPY_MAX_BYTES: usize = 256;
    /// The longest database name SQLite may hand the VFS (only `:memory:`-style names arrive).
    const MAX_PATHNAME_BYTES: c_int = 512;

    /// Julian day of the Unix epoch, in milliseconds (what `xCurrentTimeInt64` counts from).
    const UNIX_EPOCH_JULIAN_MS: i64 = 210_866_760_000_000;

    unsafe extern "C" {
        /// wasi-libc: fills `buf` from `random_get`, which the host seeds per execution.
        fn getentropy(buf: *mut c_void, len: usize) -> c_int;
    }

    unsafe extern "C" fn open(
        _: *mut ffi::sqlite3_vfs,
        _: ffi::sqlite3_filename,
        file: *mut ffi::sqlite3_file,
        _: c_int,
        _: *mut c_int,
    ) -> c_int {
        // No methods: SQLite must not call close on a file that never opened.
        unsafe { (*file).pMethods = ptr::null() };
        ffi::SQLITE_CANTOPEN
    }

    unsafe extern "C" fn delete(_: *mut ffi::sqlite3_vfs, _: *const c_char, _: c_int) -> c_int {
        ffi::SQLITE_IOERR_DELETE
    }

    unsafe extern "C" fn access(_: *mut ffi::sqlite3_vfs, _: *const c_char, _: c_int, out: *mut c_int) -> c_int {
        unsafe { *out = 0 };
        ffi::SQLITE_OK
    }

    unsafe extern "C" fn full_pathname(
        _: *mut ffi::sqlite3_vfs,
        name: *const c_char,
        capacity: c_int,
        out: *mut c_char,
    ) -> c_int {
        let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_bytes_with_nul();
        if name.len() > capacity as usize {
            return ffi::SQLITE_CANTOPEN;
        }
        unsafe { ptr::copy_nonoverlapping(name.as_ptr().cast(), out, name.len()) };
        ffi::SQLITE_OK
    }

    unsafe extern "C" fn randomness(_: *mut ffi::sqlite3_vfs, len: c_int, out: *mut c_char) -> c_int {
        let mut filled = 0usize;
        while filled < len as usize {
            let chunk = (len as usize - filled).min(GETENTROPY_MAX_BYTES);
            unsafe { getentropy(out.add(filled).cast(), chunk) };
            filled += chunk;
        }
        len
    }

    unsafe extern "C" fn sleep(_: *mut ffi::sqlite3_vfs, microseconds: c_int) -> c_int {
        // Nothing else runs in the guest: waiting would change nothing.
        microseconds
    }

    unsafe extern "C" fn current_time_ms(_: *mut ffi::sqlite3_vfs, out: *mut ffi::sqlite3_int64) -> c_int {
        let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        unsafe { *out = UNIX_EPOCH_JULIAN_MS + since_epoch.as_millis() as i64 };
        ffi::SQLITE_OK
    }

    unsafe extern "C" fn current_time(vfs: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
        let mut ms = 0;
        unsafe {
            current_time_ms(vfs, &mut ms);
            *out = ms as f64 / 86_400_000.0;
        }
        ffi::SQLITE_OK
    }

    unsafe extern "C" fn last_error(_: *mut ffi::sqlite3_vfs, _: c_int, _: *mut c_char) -> c_int {
        0
    }

    /// The VFS registered as the default one; SQLite keeps a pointer to it.
    struct Registered(std::cell::UnsafeCell<ffi::sqlite3_vfs>);
    // SAFETY: the guest is single-threaded (SQLite is built with SQLITE_THREADSAFE=0).
    unsafe impl Sync for Registered {}

    static VFS: Registered = Registered(std::cell::UnsafeCell::new(ffi::sqlite3_vfs {
        iVersion: 2,
        szOsFile: std::mem::size_of::<ffi::sqlite3_file>() as c_int,
        mxPathname: MAX_PATHNAME_BYTES,
        pNext: ptr::null_mut(),
        zName: c"sluice".as_ptr(),
        pAppData: ptr::null_mut(),
        xOpen: Some(open),
        xDelete: Some(delete),
        xAccess: Some(access),
        xFullPathname: Some(full_pathname),
        xDlOpen: None,
        xDlError: None,
        xDlSym: None,
        xDlClose: None,
        xRandomness: Some(randomness),
        xSleep: Some(sleep),
        xCurrentTime: Some(current_time),
        xGetLastError: Some(last_error),
        xCurrentTimeInt64: Some(current_time_ms),
        xSetSystemCall: None,
        xGetSystemCall: None,
        xNextSystemCall: None,
    }));

    /// Called by `sqlite3_initialize` when SQLite is built with `SQLITE_OS_OTHER`.
    #[unsafe(no_mangle)]
    pub extern "C" fn sqlite3_os_init() -> c_int {
        unsafe { ffi::sqlite3_vfs_register(VFS.0.get(), 1) }
    }

    /// Called by `sqlite3_shutdown`.
    #[unsafe(no_mangle)]
    pub extern "C" fn sqlite3_os_end() -> c_int {
        ffi::SQLITE_OK
    }
}

#[rustpython_vm::pymodule]
pub(crate) mod _sluice_sqlite {
    use super::{c_char, c_int, c_void, ffi};
    use rustpython_vm::builtins::{PyBaseExceptionRef, PyDict, PyList, PyStr, PyStrRef, PyTuple, PyTupleRef};
    use rustpython_vm::{Py, PyObject, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, pyclass};
    use std::cell::{Cell, RefCell};
    use std::ffi::{CStr, CString};
    use std::ptr;

    unsafe extern "C" {
        /// Closes once the last statement is finalized (libsqlite3-sys's bindings omit it).
        fn sqlite3_close_v2(db: *mut ffi::sqlite3) -> c_int;
    }

    thread_local! {
        /// Makes DB-API exceptions: `factory(class_name, extended_code, message)`, where an empty
        /// class name means "choose by the SQLite code". Set once by `_sqlite3`.
        static ERROR_FACTORY: RefCell<Option<PyObjectRef>> = const { RefCell::new(None) };
        /// The VM of the Python call that entered SQLite, for callbacks into Python.
        static CURRENT_VM: Cell<*const VirtualMachine> = const { Cell::new(ptr::null()) };
    }

    /// The version of the SQLite compiled in.
    #[pyfunction]
    fn sqlite_version() -> String {
        unsafe { CStr::from_ptr(ffi::sqlite3_libversion()) }.to_string_lossy().into_owned()
    }

    /// Sets the function that turns SQLite failures into DB-API exceptions.
    #[pyfunction]
    fn set_error_factory(factory: PyObjectRef) {
        ERROR_FACTORY.with(|f| *f.borrow_mut() = Some(factory));
    }

    pub(super) fn make_error(vm: &VirtualMachine, class: &str, code: c_int, message: String) -> PyBaseExceptionRef {
        let factory = ERROR_FACTORY.with(|f| f.borrow().clone());
        let Some(factory) = factory else { return vm.new_runtime_error(message) };
        match factory.call((vm.ctx.new_str(class), code, message), vm) {
            Ok(exception) => {
                exception.downcast().unwrap_or_else(|_| vm.new_type_error("error factory returned no exception"))
            }
            Err(e) => e,
        }
    }

    pub(super) fn programming_error(vm: &VirtualMachine, message: impl Into<String>) -> PyBaseExceptionRef {
        make_error(vm, "ProgrammingError", 0, message.into())
    }

    /// The last failure on `db`, as the DB-API exception its code calls for.
    fn sqlite_error(vm: &VirtualMachine, db: *mut ffi::sqlite3) -> PyBaseExceptionRef {
        let (code, message) = unsafe {
            let message = CStr::from_ptr(ffi::sqlite3_errmsg(db)).to_string_lossy().into_owned();
            (ffi::sqlite3_extended_errcode(db), message)
        };
        make_error(vm, "", code, message)
    }

    /// `Ok` for `SQLITE_OK`, else the failure on `db` as its DB-API exception.
    fn checked(vm: &VirtualMachine, db: *mut ffi::sqlite3, rc: c_int) -> PyResult<()> {
        if rc == ffi::SQLITE_OK { Ok(()) } else { Err(sqlite_error(vm, db)) }
    }

    /// Runs `f` (which may call back into Python) with `vm` reachable from the callbacks.
    fn with_vm<R>(vm: &VirtualMachine, f: impl FnOnce() -> R) -> R {
        let previous = CURRENT_VM.with(|c| c.replace(vm as *const _));
        let result = f();
        CURRENT_VM.with(|c| c.set(previous));
        result
    }

    /// `text` as UTF-8 (SQLite's encoding): strings with lone surrogates cannot be stored.
    fn utf8<'a>(vm: &VirtualMachine, text: &'a PyStr) -> PyResult<&'a str> {
        text.to_str().ok_or_else(|| {
            make_error(vm, "DataError", 0, "the text contains surrogates, which UTF-8 cannot hold".into())
        })
    }

    fn c_string(vm: &VirtualMachine, text: &PyStr) -> PyResult<CString> {
        CString::new(utf8(vm, text)?).map_err(|_| programming_error(vm, "the query contains a null character"))
    }

    type ScalarFn = unsafe extern "C" fn(*mut ffi::sqlite3_context, c_int, *mut *mut ffi::sqlite3_value);
    type FinalFn = unsafe extern "C" fn(*mut ffi::sqlite3_context);

    /// The C entry points of a function: `scalar`, or `step` and `last` for an aggregate.
    struct SqlFunction {
        scalar: Option<ScalarFn>,
        step: Option<ScalarFn>,
        last: Option<FinalFn>,
    }

    /// An open database. Closed explicitly or when collected.
    #[pyattr]
    #[pyclass(name = "Database")]
    #[derive(Debug, PyPayload)]
    pub(crate) struct Database {
        handle: Cell<*mut ffi::sqlite3>,
    }

    impl Drop for Database {
        fn drop(&mut self) {
            // close_v2 waits for statements still alive before it frees the connection.
            unsafe { sqlite3_close_v2(self.handle.replace(ptr::null_mut())) };
        }
    }

    impl Database {
        /// Registers `python` (a function or an aggregate class) under `name`, or removes the
        /// function of that name when `python` is `None`. SQLite owns the reference it keeps.
        fn define_function(
            &self,
            name: &PyStr,
            arity: c_int,
            flags: c_int,
            python: PyObjectRef,
            callbacks: SqlFunction,
            vm: &VirtualMachine,
        ) -> PyResult<()> {
            let db = self.db(vm)?;
            let name = c_string(vm, name)?;
            let removing = vm.is_none(&python);
            let (data, callbacks, release) = match removing {
                true => (ptr::null_mut(), SqlFunction { scalar: None, step: None, last: None }, None),
                false => (Box::into_raw(Box::new(python)).cast(), callbacks, Some(callbacks::release as _)),
            };
            let rc = unsafe {
                ffi::sqlite3_create_function_v2(
                    db,
                    name.as_ptr(),
                    arity,
                    flags,
                    data,
                    callbacks.scalar,
                    callbacks.step,
                    callbacks.last,
                    release,
                )
            };
            checked(vm, db, rc)
        }

        fn db(&self, vm: &VirtualMachine) -> PyResult<*mut ffi::sqlite3> {
            let db = self.handle.get();
            if db.is_null() {
                return Err(programming_error(vm, "Cannot operate on a closed database."));
            }
            Ok(db)
        }
    }

    /// Opens `path` (`:memory:`, or a URI when `uri` is true).
    #[pyfunction]
    fn open(path: PyStrRef, uri: bool, vm: &VirtualMachine) -> PyResult<Database> {
        let path = c_string(vm, &path)?;
        let mut flags = ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_CREATE;
        if uri {
            flags |= ffi::SQLITE_OPEN_URI;
        }
        let mut db = ptr::null_mut();
        let rc = unsafe { ffi::sqlite3_open_v2(path.as_ptr(), &mut db, flags, ptr::null()) };
        let database = Database { handle: Cell::new(db) };
        if rc != ffi::SQLITE_OK {
            if db.is_null() {
                return Err(vm.new_memory_error("out of memory opening a database"));
            }
            return Err(sqlite_error(vm, db));
        }
        unsafe { ffi::sqlite3_extended_result_codes(db, 1) };
        Ok(database)
    }

    /// Whether `sql` is one or more complete statements.
    #[pyfunction]
    fn complete_statement(sql: PyStrRef, vm: &VirtualMachine) -> PyResult<bool> {
        let sql = c_string(vm, &sql)?;
        Ok(unsafe { ffi::sqlite3_complete(sql.as_ptr()) } != 0)
    }

    #[pyclass]
    impl Database {
        #[pymethod]
        fn close(zelf: &Py<Self>) {
            unsafe { sqlite3_close_v2(zelf.handle.replace(ptr::null_mut())) };
        }

        /// Prepares the first statement of `sql`: `(statement or None, the text after it)`.
        #[pymethod]
        fn prepare(
            zelf: &Py<Self>,
            sql: PyStrRef,
            vm: &VirtualMachine,
        ) -> PyResult<(Option<PyRef<Statement>>, String)> {
            let db = zelf.db(vm)?;
            let text = utf8(vm, &sql)?;
            if text.contains('\0') {
                return Err(programming_error(vm, "the query contains a null character"));
            }
            let mut stmt = ptr::null_mut();
            let mut tail: *const c_char = ptr::null();
            let rc = with_vm(vm, || unsafe {
                ffi::sqlite3_prepare_v2(db, text.as_ptr().cast(), text.len() as c_int, &mut stmt, &mut tail)
            });
            checked(vm, db, rc)?;
            let consumed = if tail.is_null() { text.len() } else { tail as usize - text.as_ptr() as usize };
            let rest = text[consumed.min(text.len())..].to_owned();
            let statement = (!stmt.is_null()).then(|| Statement { handle: Cell::new(stmt) }.into_ref(&vm.ctx));
            Ok((statement, rest))
        }

        /// Runs every statement of `sql`, discarding rows.
        #[pymethod]
        fn execute_script(zelf: &Py<Self>, sql: PyStrRef, vm: &VirtualMachine) -> PyResult<()> {
            let db = zelf.db(vm)?;
            let sql = c_string(vm, &sql)?;
            let rc =
                with_vm(vm, || unsafe { ffi::sqlite3_exec(db, sql.as_ptr(), None, ptr::null_mut(), ptr::null_mut()) });
            checked(vm, db, rc)
        }

        #[pymethod]
        fn changes(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<i64> {
            Ok(unsafe { ffi::sqlite3_changes64(zelf.db(vm)?) })
        }

        #[pymethod]
        fn total_changes(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<i64> {
            Ok(unsafe { ffi::sqlite3_total_changes64(zelf.db(vm)?) })
        }

        #[pymethod]
        fn last_insert_rowid(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<i64> {
            Ok(unsafe { ffi::sqlite3_last_insert_rowid(zelf.db(vm)?) })
        }

        #[pymethod]
        fn in_transaction(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<bool> {
            Ok(unsafe { ffi::sqlite3_get_autocommit(zelf.db(vm)?) } == 0)
        }

        #[pymethod]
        fn interrupt(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<()> {
            unsafe { ffi::sqlite3_interrupt(zelf.db(vm)?) };
            Ok(())
        }

        #[pymethod]
        fn limit(zelf: &Py<Self>, category: c_int, value: c_int, vm: &VirtualMachine) -> PyResult<c_int> {
            let old = unsafe { ffi::sqlite3_limit(zelf.db(vm)?, category, value) };
            if old < 0 {
                return Err(programming_error(vm, "'category' is out of bounds"));
            }
            Ok(old)
        }

        /// Registers (or, with `None`, removes) a scalar function.
        #[pymethod]
        fn create_function(
            zelf: &Py<Self>,
            name: PyStrRef,
            arity: c_int,
            function: PyObjectRef,
            deterministic: bool,
            vm: &VirtualMachine,
        ) -> PyResult<()> {
            let flags = ffi::SQLITE_UTF8 | if deterministic { ffi::SQLITE_DETERMINISTIC } else { 0 };
            let callbacks = SqlFunction { scalar: Some(callbacks::scalar), step: None, last: None };
            zelf.define_function(&name, arity, flags, function, callbacks, vm)
        }

        /// Registers (or removes) an aggregate whose class has `step(*args)` and `finalize()`.
        #[pymethod]
        fn create_aggregate(
            zelf: &Py<Self>,
            name: PyStrRef,
            arity: c_int,
            class: PyObjectRef,
            vm: &VirtualMachine,
        ) -> PyResult<()> {
            let callbacks = SqlFunction {
                scalar: None,
                step: Some(callbacks::aggregate_step),
                last: Some(callbacks::aggregate_final),
            };
            zelf.define_function(&name, arity, ffi::SQLITE_UTF8, class, callbacks, vm)
        }

        /// Registers (or removes) a collation: `compare(a, b)` returns <0, 0 or >0.
        #[pymethod]
        fn create_collation(
            zelf: &Py<Self>,
            name: PyStrRef,
            compare: PyObjectRef,
            vm: &VirtualMachine,
        ) -> PyResult<()> {
            let db = zelf.db(vm)?;
            let name = c_string(vm, &name)?;
            let rc = unsafe {
                if vm.is_none(&compare) {
                    ffi::sqlite3_create_collation_v2(db, name.as_ptr(), ffi::SQLITE_UTF8, ptr::null_mut(), None, None)
                } else {
                    ffi::sqlite3_create_collation_v2(
                        db,
                        name.as_ptr(),
                        ffi::SQLITE_UTF8,
                        Box::into_raw(Box::new(compare)).cast(),
                        Some(callbacks::collate),
                        Some(callbacks::release),
                    )
                }
            };
            checked(vm, db, rc)
        }

        /// The database `schema` as the bytes of a database file.
        #[pymethod]
        fn serialize(zelf: &Py<Self>, schema: PyStrRef, vm: &VirtualMachine) -> PyResult<Vec<u8>> {
            let db = zelf.db(vm)?;
            let schema = c_string(vm, &schema)?;
            let mut size: ffi::sqlite3_int64 = 0;
            let data = unsafe { ffi::sqlite3_serialize(db, schema.as_ptr(), &mut size, 0) };
            if data.is_null() {
                if size == 0 {
                    return Ok(Vec::new());
                }
                return Err(vm.new_memory_error("out of memory serializing a database"));
            }
            let bytes = unsafe { std::slice::from_raw_parts(data, size as usize) }.to_vec();
            unsafe { ffi::sqlite3_free(data.cast()) };
            Ok(bytes)
        }

        /// Replaces the database `schema` with the database file in `data`.
        #[pymethod]
        fn deserialize(zelf: &Py<Self>, data: PyObjectRef, schema: PyStrRef, vm: &VirtualMachine) -> PyResult<()> {
            let db = zelf.db(vm)?;
            let schema = c_string(vm, &schema)?;
            let bytes = super::bytes_of(&data).ok_or_else(|| vm.new_type_error("a bytes-like object is required"))?;
            let size = bytes.len();
            let copy = unsafe { ffi::sqlite3_malloc64(size.max(1) as u64) }.cast::<u8>();
            if copy.is_null() {
                return Err(vm.new_memory_error("out of memory deserializing a database"));
            }
            unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), copy, size) };
            let flags = ffi::SQLITE_DESERIALIZE_FREEONCLOSE | ffi::SQLITE_DESERIALIZE_RESIZEABLE;
            let rc = unsafe { ffi::sqlite3_deserialize(db, schema.as_ptr(), copy, size as i64, size as i64, flags) };
            checked(vm, db, rc)
        }
    }

    /// A prepared statement. Finalized explicitly or when collected.
    #[pyattr]
    #[pyclass(name = "Statement")]
    #[derive(Debug, PyPayload)]
    pub(crate) struct Statement {
        handle: Cell<*mut ffi::sqlite3_stmt>,
    }

    impl Drop for Statement {
        fn drop(&mut self) {
            unsafe { ffi::sqlite3_finalize(self.handle.replace(ptr::null_mut())) };
        }
    }

    impl Statement {
        fn stmt(&self, vm: &VirtualMachine) -> PyResult<*mut ffi::sqlite3_stmt> {
            let stmt = self.handle.get();
            if stmt.is_null() {
                return Err(programming_error(vm, "Cannot operate on a finalized statement."));
            }
            Ok(stmt)
        }

        fn bind_one(
            &self,
            stmt: *mut ffi::sqlite3_stmt,
            index: c_int,
            value: &PyObject,
            adapt: &PyObject,
            vm: &VirtualMachine,
        ) -> PyResult<()> {
            let rc = match super::bind_value(stmt, index, value, vm)? {
                Some(rc) => rc,
                None => {
                    let adapted = adapt.call((value.to_owned(), index), vm)?;
                    match super::bind_value(stmt, index, &adapted, vm)? {
                        Some(rc) => rc,
                        None => {
                            let type_name = value.class().name().to_string();
                            return Err(programming_error(
                                vm,
                                format!("Error binding parameter {index}: type '{type_name}' is not supported"),
                            ));
                        }
                    }
                }
            };
            checked(vm, unsafe { ffi::sqlite3_db_handle(stmt) }, rc)
        }

        fn row(&self, stmt: *mut ffi::sqlite3_stmt, text_as_bytes: bool, vm: &VirtualMachine) -> PyResult<PyTupleRef> {
            let count = unsafe { ffi::sqlite3_column_count(stmt) };
            let mut values = Vec::with_capacity(count as usize);
            for column in 0..count {
                values.push(super::column_value(stmt, column, text_as_bytes, vm)?);
            }
            Ok(vm.ctx.new_tuple(values))
        }

        /// One step: `Some(row)`, or `None` when the statement is done.
        fn advance(
            &self,
            stmt: *mut ffi::sqlite3_stmt,
            text_as_bytes: bool,
            vm: &VirtualMachine,
        ) -> PyResult<Option<PyTupleRef>> {
            match with_vm(vm, || unsafe { ffi::sqlite3_step(stmt) }) {
                ffi::SQLITE_ROW => Ok(Some(self.row(stmt, text_as_bytes, vm)?)),
                ffi::SQLITE_DONE => Ok(None),
                _ => {
                    let db = unsafe { ffi::sqlite3_db_handle(stmt) };
                    let error = callbacks::take_python_error().unwrap_or_else(|| sqlite_error(vm, db));
                    unsafe { ffi::sqlite3_reset(stmt) };
                    Err(error)
                }
            }
        }
    }

    #[pyclass]
    impl Statement {
        #[pymethod]
        fn param_count(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<c_int> {
            Ok(unsafe { ffi::sqlite3_bind_parameter_count(zelf.stmt(vm)?) })
        }

        #[pymethod]
        fn readonly(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<bool> {
            Ok(unsafe { ffi::sqlite3_stmt_readonly(zelf.stmt(vm)?) } != 0)
        }

        /// `((name, declared type or None), ...)` of the result columns.
        #[pymethod]
        fn columns(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyTupleRef> {
            let stmt = zelf.stmt(vm)?;
            let count = unsafe { ffi::sqlite3_column_count(stmt) };
            let text = |p: *const c_char| -> PyObjectRef {
                if p.is_null() {
                    return vm.ctx.none();
                }
                vm.ctx.new_str(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()).into()
            };
            let columns = (0..count)
                .map(|i| unsafe {
                    let name = text(ffi::sqlite3_column_name(stmt, i));
                    vm.ctx.new_tuple(vec![name, text(ffi::sqlite3_column_decltype(stmt, i))]).into()
                })
                .collect();
            Ok(vm.ctx.new_tuple(columns))
        }

        /// Binds a sequence (by position) or a mapping (by name); values SQLite cannot hold are
        /// passed through `adapt(value, index)` first.
        #[pymethod]
        fn bind(zelf: &Py<Self>, parameters: PyObjectRef, adapt: PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
            let stmt = zelf.stmt(vm)?;
            unsafe {
                ffi::sqlite3_reset(stmt);
                ffi::sqlite3_clear_bindings(stmt);
            }
            let expected = unsafe { ffi::sqlite3_bind_parameter_count(stmt) };
            if let Some(mapping) = parameters.downcast_ref::<PyDict>() {
                for index in 1..=expected {
                    let name = unsafe { ffi::sqlite3_bind_parameter_name(stmt, index) };
                    if name.is_null() {
                        return Err(programming_error(
                            vm,
                            format!(
                                "Binding {index} has no name, but you supplied a dictionary (which has only names)."
                            ),
                        ));
                    }
                    let name = unsafe { CStr::from_ptr(name.add(1)) }.to_string_lossy().into_owned();
                    let value = mapping.get_item_opt(name.as_str(), vm)?.ok_or_else(|| {
                        programming_error(vm, format!("You did not supply a value for binding parameter :{name}."))
                    })?;
                    zelf.bind_one(stmt, index, &value, &adapt, vm)?;
                }
                return Ok(());
            }
            let values: Vec<PyObjectRef> = if let Some(tuple) = parameters.downcast_ref::<PyTuple>() {
                tuple.as_slice().to_vec()
            } else if let Some(list) = parameters.downcast_ref::<PyList>() {
                list.borrow_vec().to_vec()
            } else {
                return Err(vm.new_type_error("parameters are of unsupported type"));
            };
            if values.len() != expected as usize {
                return Err(programming_error(
                    vm,
                    format!(
                        "Incorrect number of bindings supplied. The current statement uses {expected}, and there are {} supplied.",
                        values.len()
                    ),
                ));
            }
            for (index, value) in (1..).zip(values.iter()) {
                zelf.bind_one(stmt, index, value, &adapt, vm)?;
            }
            Ok(())
        }

        /// Runs to the next row: the row as a tuple, or `None` when done.
        #[pymethod]
        fn step(zelf: &Py<Self>, text_as_bytes: bool, vm: &VirtualMachine) -> PyResult<Option<PyTupleRef>> {
            let stmt = zelf.stmt(vm)?;
            zelf.advance(stmt, text_as_bytes, vm)
        }

        /// Up to `limit` rows (all that remain when negative; the list lives in guest memory,
        /// which `memory_bytes` bounds).
        #[pymethod]
        fn fetch(zelf: &Py<Self>, limit: i64, text_as_bytes: bool, vm: &VirtualMachine) -> PyResult<PyObjectRef> {
            let stmt = zelf.stmt(vm)?;
            let limit = usize::try_from(limit).unwrap_or(usize::MAX);
            let mut rows = Vec::new();
            while rows.len() < limit {
                match zelf.advance(stmt, text_as_bytes, vm)? {
                    Some(row) => rows.push(row.into()),
                    None => break,
                }
            }
            Ok(vm.ctx.new_list(rows).into())
        }

        #[pymethod]
        fn reset(zelf: &Py<Self>) {
            unsafe { ffi::sqlite3_reset(zelf.handle.get()) };
        }

        #[pymethod]
        fn finalize(zelf: &Py<Self>) {
            unsafe { ffi::sqlite3_finalize(zelf.handle.replace(ptr::null_mut())) };
        }
    }

    /// The C side of user functions, aggregates and collations: each finds the VM through
    /// `CURRENT_VM` (SQLite calls them only from inside a step the VM started).
    mod callbacks {
        use super::{CURRENT_VM, c_int, c_void, ffi, ptr};
        use rustpython_vm::builtins::PyBaseExceptionRef;
        use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};
        use std::cell::RefCell;

        thread_local! {
            /// A Python error raised inside a callback that must reach the caller as itself
            /// (MemoryError, or a KeyboardInterrupt-like stop), not as "function raised".
            static PYTHON_ERROR: RefCell<Option<PyBaseExceptionRef>> = const { RefCell::new(None) };
        }

        pub(super) fn take_python_error() -> Option<PyBaseExceptionRef> {
            PYTHON_ERROR.with(|e| e.borrow_mut().take())
        }

        fn current_vm<'a>() -> Option<&'a VirtualMachine> {
            let vm = CURRENT_VM.with(|c| c.get());
            (!vm.is_null()).then(|| unsafe { &*vm })
        }

        fn report(context: *mut ffi::sqlite3_context, vm: &VirtualMachine, error: PyBaseExceptionRef, message: &str) {
            if error.class().fast_issubclass(vm.ctx.exceptions.memory_error) {
                PYTHON_ERROR.with(|e| *e.borrow_mut() = Some(error));
                unsafe { ffi::sqlite3_result_error_nomem(context) };
                return;
            }
            unsafe { ffi::sqlite3_result_error(context, message.as_ptr().cast(), message.len() as c_int) };
        }

        fn arguments(vm: &VirtualMachine, count: c_int, values: *mut *mut ffi::sqlite3_value) -> Vec<PyObjectRef> {
            (0..count as usize).map(|i| super::super::sqlite_value(unsafe { *values.add(i) }, vm)).collect()
        }

        fn set_result(context: *mut ffi::sqlite3_context, vm: &VirtualMachine, value: &PyObjectRef) {
            if !super::super::result_value(context, value, vm) {
                let message = "user-defined function raised exception";
                unsafe { ffi::sqlite3_result_error(context, message.as_ptr().cast(), message.len() as c_int) };
            }
        }

        pub(super) unsafe extern "C" fn release(data: *mut c_void) {
            drop(unsafe { Box::from_raw(data.cast::<PyObjectRef>()) });
        }

        pub(super) unsafe extern "C" fn scalar(
            context: *mut ffi::sqlite3_context,
            count: c_int,
            values: *mut *mut ffi::sqlite3_value,
        ) {
            let Some(vm) = current_vm() else { return };
            let function = unsafe { &*ffi::sqlite3_user_data(context).cast::<PyObjectRef>() };
            match function.call(arguments(vm, count, values), vm) {
                Ok(value) => set_result(context, vm, &value),
                Err(e) => report(context, vm, e, "user-defined function raised exception"),
            }
        }

        /// The aggregate's instance lives in SQLite's per-group context as a boxed reference.
        fn instance(context: *mut ffi::sqlite3_context, create: bool) -> *mut *mut PyObjectRef {
            let bytes = if create { std::mem::size_of::<*mut PyObjectRef>() as c_int } else { 0 };
            unsafe { ffi::sqlite3_aggregate_context(context, bytes) }.cast()
        }

        pub(super) unsafe extern "C" fn aggregate_step(
            context: *mut ffi::sqlite3_context,
            count: c_int,
            values: *mut *mut ffi::sqlite3_value,
        ) {
            let Some(vm) = current_vm() else { return };
            let slot = instance(context, true);
            if slot.is_null() {
                unsafe { ffi::sqlite3_result_error_nomem(context) };
                return;
            }
            if unsafe { (*slot).is_null() } {
                let class = unsafe { &*ffi::sqlite3_user_data(context).cast::<PyObjectRef>() };
                match class.call((), vm) {
                    Ok(object) => unsafe { *slot = Box::into_raw(Box::new(object)) },
                    Err(e) => return report(context, vm, e, "user-defined aggregate's '__init__' method raised error"),
                }
            }
            let object = unsafe { &**slot };
            let result = vm.call_method(object, "step", arguments(vm, count, values));
            if let Err(e) = result {
                report(context, vm, e, "user-defined aggregate's 'step' method raised error");
            }
        }

        pub(super) unsafe extern "C" fn aggregate_final(context: *mut ffi::sqlite3_context) {
            let Some(vm) = current_vm() else { return };
            let slot = instance(context, false);
            let object = if slot.is_null() || unsafe { (*slot).is_null() } {
                // No row reached this group: CPython still makes an instance to finalize.
                let class = unsafe { &*ffi::sqlite3_user_data(context).cast::<PyObjectRef>() };
                match class.call((), vm) {
                    Ok(object) => object,
                    Err(e) => return report(context, vm, e, "user-defined aggregate's '__init__' method raised error"),
                }
            } else {
                *unsafe { Box::from_raw(std::mem::replace(&mut *slot, ptr::null_mut())) }
            };
            match vm.call_method(&object, "finalize", ()) {
                Ok(value) => set_result(context, vm, &value),
                Err(e) => report(context, vm, e, "user-defined aggregate's 'finalize' method raised error"),
            }
        }

        pub(super) unsafe extern "C" fn collate(
            data: *mut c_void,
            left_len: c_int,
            left: *const c_void,
            right_len: c_int,
            right: *const c_void,
        ) -> c_int {
            let Some(vm) = current_vm() else { return 0 };
            let text = |p: *const c_void, n: c_int| {
                let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n.max(0) as usize) };
                vm.ctx.new_str(String::from_utf8_lossy(bytes).into_owned())
            };
            let compare = unsafe { &*data.cast::<PyObjectRef>() };
            let Ok(result) = compare.call((text(left, left_len), text(right, right_len)), vm) else { return 0 };
            let Ok(order) = result.try_index(vm) else { return 0 };
            let order = order.as_bigint();
            match i64::try_from(order) {
                Ok(small) => small.signum() as c_int,
                Err(_) if order.to_string().starts_with('-') => -1,
                Err(_) => 1,
            }
        }
    }
}

use rustpython_vm::builtins::{PyByteArray, PyBytes, PyFloat, PyInt, PyStr};
use rustpython_vm::{PyObject, PyObjectRef, PyResult, VirtualMachine};

/// The bytes of a bytes-like value SQLite can store as a blob, if `value` is one.
fn bytes_of(value: &PyObject) -> Option<Vec<u8>> {
    if let Some(bytes) = value.downcast_ref::<PyBytes>() {
        return Some(bytes.as_bytes().to_vec());
    }
    value.downcast_ref::<PyByteArray>().map(|array| array.borrow_buf().to_vec())
}

/// Binds a value SQLite holds natively; `Ok(None)` when `value` needs adapting first.
fn bind_value(
    stmt: *mut ffi::sqlite3_stmt,
    index: c_int,
    value: &PyObject,
    vm: &VirtualMachine,
) -> PyResult<Option<c_int>> {
    let rc = unsafe {
        if vm.is_none(value) {
            ffi::sqlite3_bind_null(stmt, index)
        } else if let Some(int) = value.downcast_ref::<PyInt>() {
            let Ok(number) = i64::try_from(int.as_bigint()) else {
                return Err(vm.new_overflow_error("Python int too large to convert to SQLite INTEGER"));
            };
            ffi::sqlite3_bind_int64(stmt, index, number)
        } else if let Some(float) = value.downcast_ref::<PyFloat>() {
            ffi::sqlite3_bind_double(stmt, index, float.to_f64())
        } else if let Some(text) = value.downcast_ref::<PyStr>() {
            let text = text.as_wtf8().as_bytes();
            ffi::sqlite3_bind_text64(
                stmt,
                index,
                text.as_ptr().cast(),
                text.len() as u64,
                ffi::SQLITE_TRANSIENT(),
                ffi::SQLITE_UTF8 as u8,
            )
        } else if let Some(bytes) = bytes_of(value) {
            ffi::sqlite3_bind_blob64(stmt, index, bytes.as_ptr().cast(), bytes.len() as u64, ffi::SQLITE_TRANSIENT())
        } else {
            return Ok(None);
        }
    };
    Ok(Some(rc))
}

/// Column `column` of the current row as a Python value.
fn column_value(
    stmt: *mut ffi::sqlite3_stmt,
    column: c_int,
    text_as_bytes: bool,
    vm: &VirtualMachine,
) -> PyResult<PyObjectRef> {
    unsafe {
        Ok(match ffi::sqlite3_column_type(stmt, column) {
            ffi::SQLITE_INTEGER => vm.ctx.new_int(ffi::sqlite3_column_int64(stmt, column)).into(),
            ffi::SQLITE_FLOAT => vm.ctx.new_float(ffi::sqlite3_column_double(stmt, column)).into(),
            ffi::SQLITE_TEXT => {
                let text = ffi::sqlite3_column_text(stmt, column);
                let bytes = blob_slice(text.cast(), ffi::sqlite3_column_bytes(stmt, column));
                if text_as_bytes {
                    return Ok(vm.ctx.new_bytes(bytes.to_vec()).into());
                }
                match std::str::from_utf8(bytes) {
                    Ok(text) => vm.ctx.new_str(text).into(),
                    Err(_) => {
                        let name = std::ffi::CStr::from_ptr(ffi::sqlite3_column_name(stmt, column)).to_string_lossy();
                        let message = format!("Could not decode to UTF-8 column '{name}'");
                        return Err(_sluice_sqlite::make_error(vm, "OperationalError", 0, message));
                    }
                }
            }
            ffi::SQLITE_BLOB => {
                let blob = ffi::sqlite3_column_blob(stmt, column);
                vm.ctx.new_bytes(blob_slice(blob, ffi::sqlite3_column_bytes(stmt, column)).to_vec()).into()
            }
            _ => vm.ctx.none(),
        })
    }
}

/// A user function's argument as a Python value.
fn sqlite_value(value: *mut ffi::sqlite3_value, vm: &VirtualMachine) -> PyObjectRef {
    unsafe {
        match ffi::sqlite3_value_type(value) {
            ffi::SQLITE_INTEGER => vm.ctx.new_int(ffi::sqlite3_value_int64(value)).into(),
            ffi::SQLITE_FLOAT => vm.ctx.new_float(ffi::sqlite3_value_double(value)).into(),
            ffi::SQLITE_TEXT => {
                let bytes = blob_slice(ffi::sqlite3_value_text(value).cast(), ffi::sqlite3_value_bytes(value));
                vm.ctx.new_str(String::from_utf8_lossy(bytes).into_owned()).into()
            }
            ffi::SQLITE_BLOB => vm
                .ctx
                .new_bytes(blob_slice(ffi::sqlite3_value_blob(value), ffi::sqlite3_value_bytes(value)).to_vec())
                .into(),
            _ => vm.ctx.none(),
        }
    }
}

/// Sets a user function's result; false when `value` is of a type SQLite cannot hold.
fn result_value(context: *mut ffi::sqlite3_context, value: &PyObjectRef, vm: &VirtualMachine) -> bool {
    unsafe {
        if vm.is_none(value) {
            ffi::sqlite3_result_null(context);
        } else if let Some(int) = value.downcast_ref::<PyInt>() {
            match i64::try_from(int.as_bigint()) {
                Ok(number) => ffi::sqlite3_result_int64(context, number),
                Err(_) => return false,
            }
        } else if let Some(float) = value.downcast_ref::<PyFloat>() {
            ffi::sqlite3_result_double(context, float.to_f64());
        } else if let Some(text) = value.downcast_ref::<PyStr>() {
            let text = text.as_wtf8().as_bytes();
            ffi::sqlite3_result_text64(
                context,
                text.as_ptr().cast(),
                text.len() as u64,
                ffi::SQLITE_TRANSIENT(),
                ffi::SQLITE_UTF8 as u8,
            );
        } else if let Some(bytes) = bytes_of(value) {
            ffi::sqlite3_result_blob64(context, bytes.as_ptr().cast(), bytes.len() as u64, ffi::SQLITE_TRANSIENT());
        } else {
            return false;
        }
    }
    true
}

/// SQLite returns a null pointer for empty text and blobs.
unsafe fn blob_slice<'a>(data: *const c_void, len: c_int) -> &'a [u8] {
    if data.is_null() || len <= 0 {
        return &[];
    }
    unsafe { std::slice::from_raw_parts(data.cast(), len as usize) }
}
