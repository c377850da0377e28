//! The Sluice Python guest: RustPython behind the `sluice_v1` ABI (see `../README.md`).
//!
//! This crate is deliberately thin. It owns the interpreter, moves frames between linear
//! memory and Python objects, runs each cell's common steps (`cell`), and exposes two Python
//! modules' worth of host access (`_sluice_abi`). The rest of executions, the event loop and
//! tools live in the Python runtime that the host hands in once, at pre-initialization.

use rustpython_vm::builtins::{PyDict, PyStr};
use rustpython_vm::{Interpreter, InterpreterBuilder, Py, PyObjectRef, PyResult, VirtualMachine, compiler::Mode};
use std::cell::RefCell;

mod cell;
mod fast_dumps;
mod fast_json;
mod fast_sum;
#[cfg(target_arch = "wasm32")]
mod mem_compare;
#[cfg(target_arch = "wasm32")]
mod small_blocks;
mod sqlite;
mod tool_call;

use tool_call::tool_calls;

/// Small blocks from free lists, the rest from wasi-libc's malloc (see `small_blocks`). Only in
/// the guest: its one thread is what lets the lists go without locks.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: small_blocks::SmallBlocks = small_blocks::SmallBlocks::new();

/// Loads the runtime modules the host handed in and returns the runtime's `dispatch`.
const LOADER: &str = r#"
import sys
def load(boot):
    for name, source in boot["modules"]:
        module = type(sys)(name)
        module.__file__ = "<sluice:" + name + ">"
        sys.modules[name] = module
        exec(compile(source, module.__file__, "exec"), module.__dict__)
    entry = sys.modules[boot["entry"]]
    entry.preinit(boot)
    return entry.dispatch
"#;

struct Guest {
    interpreter: Interpreter,
    dispatch: PyObjectRef,
}

thread_local! {
    static GUEST: RefCell<Option<Guest>> = const { RefCell::new(None) };
    /// The host writes each input frame here (see `sluice_input`).
    static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The last output frame; it stays valid until the next `sluice_step`.
    static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

#[cfg(target_arch = "wasm32")]
mod host {
    #[link(wasm_import_module = "sluice_v1")]
    unsafe extern "C" {
        /// Length of the bootstrap frame (only during pre-initialization; -1 otherwise).
        pub fn bootstrap_len() -> i32;
        /// Copies the bootstrap frame into `ptr`; returns the bytes written or -1.
        pub fn bootstrap_read(ptr: *mut u8, len: i32) -> i32;
        /// Blocking path: hands pending calls to the host, returns the answer's length.
        pub fn wait(ptr: *const u8, len: i32) -> i32;
        /// Copies the answer of the last `wait` into `ptr`; returns the bytes written or -1.
        pub fn take(ptr: *mut u8, len: i32) -> i32;
    }
}

/// Native builds (only `cargo check` on the host) never reach the host imports.
#[cfg(not(target_arch = "wasm32"))]
mod host {
    pub unsafe fn bootstrap_len() -> i32 {
        -1
    }
    pub unsafe fn bootstrap_read(_: *mut u8, _: i32) -> i32 {
        -1
    }
    pub unsafe fn wait(_: *const u8, _: i32) -> i32 {
        -1
    }
    pub unsafe fn take(_: *mut u8, _: i32) -> i32 {
        -1
    }
}

/// Reads a frame whose length the host announced, through a host copy function.
/// The buffer is not zeroed first: the host writes all of it or the frame is dropped, and a
/// tool result of 76 KB was otherwise written twice.
fn read_host_frame(len: i32, copy: impl FnOnce(*mut u8, i32) -> i32) -> Option<Vec<u8>> {
    let len = usize::try_from(len).ok()?;
    let mut buf = Vec::with_capacity(len);
    let written = copy(buf.as_mut_ptr(), len as i32);
    if usize::try_from(written).ok()? != len {
        return None;
    }
    // SAFETY: the host answered `len`, which it does only after writing all `len` bytes into
    // the buffer's capacity (`abi.rs`, `hand_over`).
    unsafe { buf.set_len(len) };
    Some(buf)
}

/// A tool result's text as a `str`. `chars` is the host's count of its characters (`[seq,
/// bytes, chars]` in the frame): the host writes only Rust strings, valid UTF-8, and counts them
/// natively, so the text needs no scan here, where one was a quarter of awaiting a 76 KB result
/// (a loop over four bytes at a time). Equal counts mean ASCII. Without a count (a frame that
/// names only the length), the text is checked as before: `None` when it is not UTF-8.
fn result_text(bytes: &[u8], chars: Option<usize>, vm: &VirtualMachine) -> Option<PyObjectRef> {
    match chars {
        Some(chars) if chars == bytes.len() => {
            // SAFETY: the host counted as many characters as bytes: every byte is ASCII.
            let text = unsafe { PyStr::new_ascii_unchecked(bytes.to_vec()) };
            Some(vm.ctx.new_str(text).into())
        }
        Some(_) => {
            // SAFETY: the host hands over only the bytes of Rust strings (`answer_frame`).
            let text = unsafe { String::from_utf8_unchecked(bytes.to_vec()) };
            Some(vm.ctx.new_str(text).into())
        }
        None if bytes.is_ascii() => {
            // SAFETY: every byte was just found to be ASCII.
            let text = unsafe { PyStr::new_ascii_unchecked(bytes.to_vec()) };
            Some(vm.ctx.new_str(text).into())
        }
        None => std::str::from_utf8(bytes).ok().map(|text| vm.ctx.new_str(text).into()),
    }
}

fn to_json(vm: &VirtualMachine, obj: &PyObjectRef) -> PyResult<Vec<u8>> {
    let ser = rustpython_vm::py_serde::PyObjectSerializer::new(vm, obj);
    serde_json::to_vec(&ser).map_err(|e| vm.new_value_error(format!("frame is not JSON: {e}")))
}

/// Plain data as JSON text (`_sluice_abi.dumps`, a tool's input).
fn json_text(vm: &VirtualMachine, obj: &PyObjectRef) -> PyResult<String> {
    let bytes = to_json(vm, obj)?;
    Ok(String::from_utf8(bytes).expect("serde_json writes UTF-8"))
}

fn from_json(vm: &VirtualMachine, bytes: &[u8]) -> PyResult<PyObjectRef> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    rustpython_vm::py_serde::deserialize(vm, &mut de)
        .map_err(|e| vm.new_value_error(format!("bad frame from host: {e}")))
}

/// Hands a pending frame to the host and returns its answer (the guest blocks meanwhile).
fn wait_in_host(frame: &[u8], vm: &VirtualMachine) -> PyResult<Vec<u8>> {
    let len = unsafe { host::wait(frame.as_ptr(), frame.len() as i32) };
    read_host_frame(len, |p, n| unsafe { host::take(p, n) })
        .ok_or_else(|| vm.new_runtime_error("the host refused to answer"))
}

/// The pending frame of one call, as the runtime's `_pending_frame` writes it.
fn lone_call_frame(seq: u64, name: &PyObjectRef, input_json: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<u8>> {
    use std::io::Write;
    let mut frame = Vec::with_capacity(96);
    write!(frame, r#"{{"kind":"pending","calls":[[{seq},"#).expect("a Vec takes any write");
    write_json_str(&mut frame, name, vm)?;
    frame.push(b',');
    write_json_str(&mut frame, input_json, vm)?;
    frame.extend_from_slice(br#"]],"cancelled":[],"wake_after_ns":null}"#);
    Ok(frame)
}

/// Writes a Python value as JSON: a `str` escaped straight from its text, anything else (a
/// string with lone surrogates, a runtime error) through RustPython's serializer.
fn write_json_str(frame: &mut Vec<u8>, value: &PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
    use rustpython_vm::builtins::PyStr;
    use rustpython_vm::py_serde::PyObjectSerializer;
    let written = match value.downcast_ref::<PyStr>().and_then(|text| text.to_str()) {
        Some(text) => serde_json::to_writer(&mut *frame, text),
        None => serde_json::to_writer(&mut *frame, &PyObjectSerializer::new(vm, value)),
    };
    written.map_err(|e| vm.new_value_error(format!("frame is not JSON: {e}")))
}

/// The text of call `seq` and its character count when the answer is that one text result
/// and nothing else: the exact JSON the host's `answer_frame` writes for it,
/// `{"op":"resume","results":[[seq,bytes,chars]]}`. Any other answer (a failure, files, more
/// results, another shape) is `None`, and the caller reads it whole.
fn lone_result_text(answer: &[u8], seq: u64) -> Option<(&[u8], usize)> {
    let (json, texts) = split_frame(answer);
    let numbers = json.strip_prefix(br#"{"op":"resume","results":[["#)?.strip_suffix(b"]]}")?;
    let mut numbers = numbers.split(|&byte| byte == b',');
    let mut number = || std::str::from_utf8(numbers.next()?).ok()?.parse::<u64>().ok();
    let (named_seq, bytes, chars) = (number()?, number()?, number()?);
    if named_seq != seq || bytes != texts.len() as u64 || numbers.next().is_some() {
        return None;
    }
    Some((texts, usize::try_from(chars).ok()?))
}

/// A frame's JSON and the result texts that follow it, after the first newline (compact
/// JSON holds none; the host's `answer_frame` writes them).
fn split_frame(frame: &[u8]) -> (&[u8], &[u8]) {
    match frame.iter().position(|&byte| byte == b'\n') {
        Some(newline) => (&frame[..newline], &frame[newline + 1..]),
        None => (frame, &[]),
    }
}

/// A frame from the host as Python data, each text result (`[seq, bytes, chars]` in the
/// JSON) made `[seq, text]`, its text taken from beside the JSON, in order.
fn read_frame(vm: &VirtualMachine, frame: &[u8]) -> PyResult<PyObjectRef> {
    use rustpython_vm::builtins::{PyDict, PyInt, PyList};
    let (json, texts) = split_frame(frame);
    let request = from_json(vm, json)?;
    let bad = |why: &str| vm.new_value_error(format!("bad frame from host: {why}"));
    let results = match request.downcast_ref::<PyDict>() {
        Some(dict) => dict.get_item_opt("results", vm)?,
        None => None,
    };
    let mut rest = texts;
    if let Some(results) = results {
        let results = results.downcast_ref::<PyList>().ok_or_else(|| bad("results is not a list"))?;
        for result in results.borrow_vec().iter() {
            let Some(result) = result.downcast_ref::<PyList>() else { continue };
            let mut result = result.borrow_vec_mut();
            let Some(len) = result.get(1).and_then(|len| len.downcast_ref::<PyInt>()) else { continue };
            let len = len.try_to_primitive::<usize>(vm)?;
            if len > rest.len() {
                return Err(bad("a result is longer than the texts"));
            }
            let chars = match result.get(2).and_then(|chars| chars.downcast_ref::<PyInt>()) {
                Some(chars) => Some(chars.try_to_primitive::<usize>(vm)?),
                None => None,
            };
            let (text, after) = rest.split_at(len);
            result[1] = result_text(text, chars, vm).ok_or_else(|| bad("a result is not UTF-8"))?;
            if chars.is_some() {
                result.truncate(2);
            }
            rest = after;
        }
    }
    if !rest.is_empty() {
        return Err(bad("texts left over after the results"));
    }
    Ok(request)
}

#[rustpython_vm::pymodule(with(tool_calls))]
mod _sluice_abi {
    use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine, builtins::PyStrRef};
    use std::io::Write;
    use std::mem::ManuallyDrop;
    use std::os::fd::FromRawFd;

    /// Writes text to the host's stdout (1) or stderr (2) capture, unbuffered.
    #[pyfunction]
    fn write(fd: i32, text: PyStrRef, vm: &VirtualMachine) -> PyResult<()> {
        if fd != 1 && fd != 2 {
            return Err(vm.new_value_error("fd must be 1 or 2"));
        }
        let mut file = ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        file.write_all(text.as_wtf8().as_bytes()).map_err(|e| vm.new_os_error(e.to_string()))
    }

    /// Blocks inside the host until it answers the pending calls in `frame`.
    ///
    /// Used only when a native frame cannot be left behind (a nested
    /// `run_until_complete`); everywhere else the guest returns to the host instead.
    #[pyfunction]
    fn wait(frame: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyObjectRef> {
        let answer = super::wait_in_host(&super::to_json(vm, &frame)?, vm)?;
        super::read_frame(vm, &answer)
    }

    /// Installs the native cell runner over the runtime's objects (see `cell`); a new one
    /// counts its cells from one.
    #[pyfunction]
    fn install_cell_runner(hooks: rustpython_vm::builtins::PyDictRef, vm: &VirtualMachine) -> PyResult<()> {
        super::cell::install(hooks, vm)
    }

    /// Runs an `execute` request's cell as the host's would run, returning its frame as data.
    #[pyfunction]
    fn execute_cell(request: rustpython_vm::builtins::PyDictRef, vm: &VirtualMachine) -> PyResult<PyObjectRef> {
        match super::cell::execute(&request, vm)? {
            super::cell::CellFrame::Json(json) => super::from_json(vm, &json),
            super::cell::CellFrame::Python(frame) => Ok(frame),
        }
    }

    /// The TZif bytes of the IANA time zone `key` (exact name), or `None`.
    #[pyfunction]
    fn tzdata(key: PyStrRef) -> Option<Vec<u8>> {
        let key = key.to_str()?;
        let raw = tzdb_data::find_raw(key.as_bytes())?;
        // find_raw ignores case; zoneinfo keys are file names, which do not.
        tzdb_data::TZ_NAMES.contains(&key).then(|| raw.to_vec())
    }

    /// Every zone name the compiled-in database holds.
    #[pyfunction]
    fn tzdata_names(vm: &VirtualMachine) -> PyObjectRef {
        vm.ctx.new_list(tzdb_data::TZ_NAMES.iter().map(|name| vm.ctx.new_str(*name).into()).collect()).into()
    }

    /// The IANA release of the compiled-in database (as `tzdata.IANA_VERSION`).
    #[pyfunction]
    fn tzdata_version() -> &'static str {
        tzdb_data::VERSION
    }

    /// `json.loads(text)` without options, or `NotImplemented` when the standard decoder
    /// must answer (see `fast_json`).
    #[pyfunction]
    fn loads(text: PyStrRef, vm: &VirtualMachine) -> PyObjectRef {
        super::fast_json::loads(&text, vm).unwrap_or_else(|| vm.ctx.not_implemented())
    }

    /// `sum(iterable, /, start=0)` as CPython 3.12+ computes it (see
    /// `fast_sum`); the runtime installs it as `builtins.sum`.
    #[pyfunction]
    fn sum(args: super::fast_sum::SumArgs, vm: &VirtualMachine) -> PyResult {
        super::fast_sum::sum(args, vm)
    }

    /// `json.dumps(value)` laid out as the runtime resolved its options, or `NotImplemented`
    /// when the standard encoder must answer (see `fast_dumps`).
    #[pyfunction]
    fn json_dumps(args: super::fast_dumps::DumpsArgs, vm: &VirtualMachine) -> PyObjectRef {
        super::fast_dumps::dumps_or_decline(args, vm)
    }

    /// What the small-block heap holds (see `small_blocks::HeapStats`).
    #[pyfunction]
    fn heap_stats(vm: &VirtualMachine) -> PyObjectRef {
        let dict = vm.ctx.new_dict();
        #[cfg(target_arch = "wasm32")]
        for (name, value) in super::ALLOCATOR.stats().named() {
            let _ = dict.set_item(name, vm.ctx.new_int(value).into(), vm);
        }
        dict.into()
    }

    /// Fast JSON encoding of plain data (dict, list, str, int, float, bool, None).
    #[pyfunction]
    fn dumps(obj: PyObjectRef, vm: &VirtualMachine) -> PyResult<String> {
        super::json_text(vm, &obj)
    }
}

fn format_exception(vm: &VirtualMachine, exc: &rustpython_vm::builtins::PyBaseExceptionRef) -> String {
    let mut text = String::new();
    let _ = vm.write_exception(&mut text, exc);
    text
}

fn build_interpreter() -> Interpreter {
    let mut settings = rustpython_vm::vm::Settings::default();
    settings.import_site = false;
    settings.install_signal_handlers = false;
    settings.ignore_environment = true;
    settings.isolated = true;
    settings.safe_path = true;
    settings.user_site_directory = false;
    settings.write_bytecode = false;
    // Deterministic str hashes: the same code with the same inputs gives the same output.
    settings.hash_seed = Some(0);
    let builder = InterpreterBuilder::new().settings(settings);
    let defs = rustpython_stdlib::stdlib_module_defs(&builder.ctx);
    let abi = _sluice_abi::module_def(&builder.ctx);
    let sqlite = sqlite::_sluice_sqlite::module_def(&builder.ctx);
    builder
        .add_native_modules(&defs)
        .add_native_module(abi)
        .add_native_module(sqlite)
        .add_frozen_modules(rustpython_pylib::FROZEN_STDLIB)
        .init_hook(|vm: &mut VirtualMachine| {
            let state = rustpython_vm::common::rc::PyRc::get_mut(&mut vm.state)
                .expect("no other reference to the VM state during init");
            state.config.paths.stdlib_dir = Some(rustpython_pylib::LIB_PATH.to_owned());
        })
        .build()
}

fn preinit() -> Result<(), String> {
    let len = unsafe { host::bootstrap_len() };
    let boot = read_host_frame(len, |p, n| unsafe { host::bootstrap_read(p, n) }).ok_or("no bootstrap frame")?;
    let interpreter = build_interpreter();
    let dispatch = interpreter.enter(|vm| {
        let run = || -> PyResult<PyObjectRef> {
            let scope = vm.new_scope_with_builtins();
            let code =
                vm.compile(LOADER, Mode::Exec, "<sluice:loader>").map_err(|e| e.into_pyexception(vm, Some(LOADER)))?;
            vm.run_code_obj(code, scope.clone())?;
            let load = scope.globals.get_item("load", vm)?;
            load.call((from_json(vm, &boot)?,), vm)
        };
        run().map_err(|e| format_exception(vm, &e))
    })?;
    GUEST.with(|g| *g.borrow_mut() = Some(Guest { interpreter, dispatch }));
    #[cfg(target_arch = "wasm32")]
    ALLOCATOR.forget_free_blocks();
    Ok(())
}

/// Pre-initialization entry point (run once by the host's wizer step).
#[unsafe(no_mangle)]
pub extern "C" fn sluice_preinit() {
    if let Err(message) = preinit() {
        let _ = std::io::Write::write_all(&mut std::io::stderr(), message.as_bytes());
        std::process::abort();
    }
}

/// Makes room for an input frame of `len` bytes and returns where the host may write it.
#[unsafe(no_mangle)]
pub extern "C" fn sluice_input(len: u32) -> *mut u8 {
    INPUT.with(|input| {
        let mut input = input.borrow_mut();
        input.clear();
        input.resize(len as usize, 0);
        input.as_mut_ptr()
    })
}

/// The host's frame as an `execute` request, or `None` for the runtime's `dispatch`.
fn execute_request<'a>(request: &'a PyObjectRef, vm: &VirtualMachine) -> PyResult<Option<&'a Py<PyDict>>> {
    let Some(request) = request.downcast_ref::<PyDict>() else { return Ok(None) };
    let op = request.get_item_opt("op", vm)?;
    let execute = op.as_ref().and_then(|op| op.downcast_ref::<PyStr>()).is_some_and(|op| op.as_bytes() == b"execute");
    Ok(execute.then_some(request))
}

/// Runs the input frame: a cell in the native runner (`cell`), anything else through the
/// runtime's `dispatch`. Returns `ptr << 32 | len` of the output frame.
#[unsafe(no_mangle)]
pub extern "C" fn sluice_step(len: u32) -> u64 {
    let output = GUEST.with(|guest| {
        let guest = guest.borrow();
        let Some(guest) = guest.as_ref() else {
            return br#"{"kind":"fault","message":"guest not pre-initialized"}"#.to_vec();
        };
        let frame = INPUT.with(|input| input.borrow()[..len as usize].to_vec());
        guest.interpreter.enter(|vm| {
            let step = || -> PyResult<Vec<u8>> {
                let request = read_frame(vm, &frame)?;
                let Some(cell_request) = execute_request(&request, vm)? else {
                    return to_json(vm, &guest.dispatch.call((request,), vm)?);
                };
                match cell::execute(cell_request, vm)? {
                    cell::CellFrame::Json(json) => Ok(json),
                    cell::CellFrame::Python(frame) => to_json(vm, &frame),
                }
            };
            step().unwrap_or_else(|e| {
                serde_json::json!({"kind": "fault", "message": format_exception(vm, &e)}).to_string().into_bytes()
            })
        })
    });
    OUTPUT.with(|out| {
        let mut out = out.borrow_mut();
        *out = output;
        ((out.as_ptr() as usize as u64) << 32) | out.len() as u64
    })
}
