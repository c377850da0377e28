//! A cell's execution: the steps every cell takes, natively; the runtime's Python for the rest.
//!
//! After an idle pause, a cell's time is mostly caches coming back, and the runtime's Python
//! around the script touched more than the script did: a first `x = 1 + 1` after 25 ms idle took
//! about twice as long with it as with only the compile and `eval`. Here each step is a test
//! on objects the runtime handed over once (`_sluice_runtime._cell_hooks`), and the Python
//! runs when there is work for it: tools to bind, files to place, a cell that awaits, a value,
//! an error, counts or files to report.

use rustpython_vm::builtins::{PyBaseExceptionRef, PyCode, PyDict, PyDictRef, PyStr, PyStrRef, PyTuple};
use rustpython_vm::bytecode::CodeFlags;
use rustpython_vm::compiler::Mode;
use rustpython_vm::{AsObject, Py, PyObjectRef, PyResult, VirtualMachine};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// The frame of a cell that ended with no value, nothing counted and no files written: what
/// the runtime's `_done()` builds for it.
const PLAIN_DONE: &[u8] = br#"{"kind":"done","return_code":0,"value_repr":null,"error":null,"counts":{},"files":[]}"#;

/// A compiled cell: its body's code, and its trailing expression's code or None.
type CellCode = (PyObjectRef, PyObjectRef);

/// How a cell's execution answers: its frame's JSON already written, or the runtime's frame.
pub(crate) enum CellFrame {
    Json(Vec<u8>),
    Python(PyObjectRef),
}

/// The runtime's objects a cell reads or calls (see `_cell_hooks` in `_sluice_runtime.py`).
struct Hooks {
    /// The runtime module's globals, for `_execution` (a cell that awaits, while it waits).
    runtime: PyDictRef,
    /// The `sluice` module: its `_counts` is read at each cell, as `sluice.count` reads it.
    sluice: PyObjectRef,
    stdout: PyObjectRef,
    stderr: PyObjectRef,
    calls: PyObjectRef,
    bound_tools: PyDictRef,
    bind_tools: PyObjectRef,
    remember_source: PyObjectRef,
    compile_declined: PyObjectRef,
    fs: PyObjectRef,
    open_writers: PyObjectRef,
    start_files: PyObjectRef,
    start_awaiting: PyObjectRef,
    done: PyObjectRef,
    /// `builtins.eval` as the image has it: a script that replaces the builtin does not
    /// change how its next cell runs.
    eval: PyObjectRef,
}

struct CellRunner {
    hooks: Hooks,
    /// Cells started since the runner was installed; a cell's file name is `<cell N>`.
    started: Cell<u64>,
}

thread_local! {
    static RUNNER: RefCell<Option<Rc<CellRunner>>> = const { RefCell::new(None) };
}

/// Installs a fresh runner (its cells counted from one) over the runtime's `hooks`.
pub(crate) fn install(hooks: PyDictRef, vm: &VirtualMachine) -> PyResult<()> {
    let get = |name: &str| hooks.get_item(name, vm);
    let dict = |name: &str| -> PyResult<PyDictRef> {
        get(name)?.downcast::<PyDict>().map_err(|_| vm.new_type_error(format!("cell hook {name} is not a dict")))
    };
    let hooks = Hooks {
        runtime: dict("runtime")?,
        sluice: get("sluice")?,
        stdout: get("stdout")?,
        stderr: get("stderr")?,
        calls: get("calls")?,
        bound_tools: dict("bound_tools")?,
        bind_tools: get("bind_tools")?,
        remember_source: get("remember_source")?,
        compile_declined: get("compile_declined")?,
        fs: get("fs")?,
        open_writers: get("open_writers")?,
        start_files: get("start_files")?,
        start_awaiting: get("start_awaiting")?,
        done: get("done")?,
        eval: vm.builtins.get_attr("eval", vm)?,
    };
    let runner = Rc::new(CellRunner { hooks, started: Cell::new(0) });
    // The runner replaced is dropped after the slot is free: its objects' `__del__` may run
    // Python that runs a cell.
    let replaced = RUNNER.with(|slot| slot.replace(Some(runner)));
    drop(replaced);
    Ok(())
}

/// Runs the cell of an `execute` request (the host's frame as Python data).
pub(crate) fn execute(request: &Py<PyDict>, vm: &VirtualMachine) -> PyResult<CellFrame> {
    // Cloned out of the slot: a script may run a cell from inside one.
    let runner = RUNNER.with(|slot| slot.borrow().clone());
    let runner = runner.ok_or_else(|| vm.new_runtime_error("no cell runner is installed"))?;
    runner.run(request, vm)
}

impl CellRunner {
    fn run(&self, request: &Py<PyDict>, vm: &VirtualMachine) -> PyResult<CellFrame> {
        let hooks = &self.hooks;
        let number = self.started.get() + 1;
        self.started.set(number);
        let counts = self.counts(vm)?;
        if counts.__len__() != 0 {
            counts.clear();
        }
        // Every cell starts with working output, whatever an earlier one did to sys.stdout
        // (even deleting it: assigned, not compared).
        vm.sys_module.set_attr("stdout", hooks.stdout.clone(), vm)?;
        vm.sys_module.set_attr("stderr", hooks.stderr.clone(), vm)?;
        // Every entry of the call table is keyed by a number from `next_seq`: a table that
        // numbered none holds none.
        if truthy(&hooks.calls.get_attr("next_seq", vm)?, vm)? {
            vm.call_method(&hooks.calls, "reset", ())?;
        }
        let namespace = vm.sys_module.get_attr("modules", vm)?.get_item("__main__", vm)?.get_attr("__dict__", vm)?;
        let tools = request.get_item_opt("tools", vm)?;
        match tools {
            Some(tools) if truthy(&tools, vm)? => {
                hooks.bind_tools.call((namespace.clone(), tools), vm)?;
            }
            _ if hooks.bound_tools.__len__() != 0 => {
                hooks.bind_tools.call((namespace.clone(), vm.ctx.empty_tuple.clone()), vm)?;
            }
            _ => {}
        }
        let source = request.get_item("code", vm)?;
        let filename = vm.ctx.new_str(format!("<cell {number}>"));
        hooks.remember_source.call((filename.clone(), source.clone()), vm)?;
        let changed = hooks.fs.get_attr("changed", vm)?;
        if truthy(&changed, vm)? {
            vm.call_method(&changed, "clear", ())?;
        }
        if let Some(storage_bytes) = request.get_item_opt("storage_bytes", vm)? {
            hooks.fs.set_attr("storage_bytes", storage_bytes, vm)?;
        }
        if let Some(files) = request.get_item_opt("files", vm)?
            && truthy(&files, vm)?
        {
            let frame = hooks.start_files.call((files,), vm)?;
            if !vm.is_none(&frame) {
                return Ok(CellFrame::Python(frame));
            }
        }
        let (body, expr) = match self.compile(source, filename, vm) {
            Ok(code) => code,
            Err(exc) if is_compile_error(&exc, vm) => return self.fail(exc, vm),
            Err(exc) => return Err(exc),
        };
        if is_coroutine(&body) || is_coroutine(&expr) {
            return Ok(CellFrame::Python(hooks.start_awaiting.call((body, expr, namespace), vm)?));
        }
        let mut value = match hooks.eval.call((body, namespace.clone()), vm) {
            Ok(value) => value,
            Err(exc) => return self.fail(exc, vm),
        };
        if !vm.is_none(&expr) {
            value = match hooks.eval.call((expr, namespace), vm) {
                Ok(value) => value,
                Err(exc) => return self.fail(exc, vm),
            };
        }
        if vm.is_none(&value) && self.nothing_to_report(vm)? {
            return Ok(CellFrame::Json(PLAIN_DONE.to_vec()));
        }
        Ok(CellFrame::Python(hooks.done.call((value,), vm)?))
    }

    /// `(body, expression or None)`: compiled natively, or by the runtime's
    /// `compile_declined` when a cell may call `asyncio.run` (rewritten to an `await`) or does
    /// not parse (the standard compiler then raises CPython's `SyntaxError`).
    fn compile(&self, source: PyObjectRef, filename: PyStrRef, vm: &VirtualMachine) -> PyResult<CellCode> {
        let text = source.downcast_ref::<PyStr>();
        let may_run =
            text.is_some_and(|text| contains(text.as_bytes(), b"run") && contains(text.as_bytes(), b"asyncio"));
        if let Some(text) = text.filter(|_| !may_run)
            && let Some(code) = compile_cell(text, &filename, vm)?
        {
            return Ok(code);
        }
        let compiled = self.hooks.compile_declined.call((source, filename, may_run), vm)?;
        let pair = compiled.downcast_ref::<PyTuple>().filter(|pair| pair.len() == 2);
        let pair = pair.ok_or_else(|| vm.new_type_error("a cell compiles to (body, expression)"))?;
        Ok((pair[0].clone(), pair[1].clone()))
    }

    /// What `sluice.count` adds to (a script may have rebound it).
    fn counts(&self, vm: &VirtualMachine) -> PyResult<PyDictRef> {
        let counts = self.hooks.sluice.get_attr("_counts", vm)?;
        counts.downcast::<PyDict>().map_err(|_| vm.new_type_error("sluice._counts is not a dict"))
    }

    /// A cell that raised `exc`: the runtime reports it (its traceback, or `SystemExit`'s code).
    fn fail(&self, exc: PyBaseExceptionRef, vm: &VirtualMachine) -> PyResult<CellFrame> {
        Ok(CellFrame::Python(self.hooks.done.call((vm.ctx.none(), exc), vm)?))
    }

    /// Whether the end of a cell without a value has nothing for the runtime's `_done` to
    /// add: no counts, no file changed or open for writing, no awaiting execution to forget.
    fn nothing_to_report(&self, vm: &VirtualMachine) -> PyResult<bool> {
        let hooks = &self.hooks;
        Ok(self.counts(vm)?.__len__() == 0
            && !truthy(&hooks.fs.get_attr("changed", vm)?, vm)?
            && !truthy(&hooks.open_writers.get_attr("data", vm)?, vm)?
            && hooks.runtime.get_item_opt("_execution", vm)?.is_none_or(|execution| vm.is_none(&execution)))
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

fn truthy(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
    obj.clone().try_to_bool(vm)
}

fn is_coroutine(code: &PyObjectRef) -> bool {
    code.downcast_ref::<PyCode>().is_some_and(|code| code.flags.contains(CodeFlags::COROUTINE))
}

/// The errors compiling a cell reports as the cell's own (CPython's `compile` raises these).
fn is_compile_error(exc: &PyBaseExceptionRef, vm: &VirtualMachine) -> bool {
    let kinds = &vm.ctx.exceptions;
    [kinds.syntax_error, kinds.value_error, kinds.overflow_error, kinds.memory_error, kinds.recursion_error]
        .into_iter()
        .any(|kind| exc.fast_isinstance(kind))
}

/// A cell's code: `(body, None)`, where `eval(body)` gives the value of a trailing
/// expression statement (REPL style) or None; or `(body, expression)` to evaluate one
/// after the other. `None` when the source does not parse (or is not UTF-8): the runtime's
/// `compile_declined` then reports why.
///
/// A cell is compiled once, in RustPython's `BlockExpr` mode (the code returns its
/// trailing expression's value), when that mode compiles it as a module would be: no
/// annotated assignment at module level, no `__future__` import, no docstring. Otherwise
/// the body is compiled as a module and the trailing expression on its own, which for
/// `x = 1 + 1\nprint(x)` takes three parses and two compilations against two and one.
fn compile_cell(source: &PyStr, filename: &PyStr, vm: &VirtualMachine) -> PyResult<Option<CellCode>> {
    use ruff_pin_ast::Stmt;
    let (Some(text), Some(filename)) = (source.to_str(), filename.to_str()) else { return Ok(None) };
    let Ok(parsed) = ruff_pin_parser::parse_module(text) else { return Ok(None) };
    let body = &parsed.syntax().body;
    let compile = |text: &str, mode| -> PyResult<PyObjectRef> {
        let mut opts = vm.compile_opts();
        opts.allow_top_level_await = true;
        let code = vm.compile_with_opts(text, mode, filename, opts).map_err(|e| e.into_pyexception(vm, Some(text)))?;
        Ok(code.into())
    };
    let Some(Stmt::Expr(last)) = body.last() else {
        return Ok(Some((compile(text, Mode::Exec)?, vm.ctx.none())));
    };
    let docstring = body.len() > 1 && ruff_pin_ast::helpers::is_docstring_stmt(&body[0]);
    if !docstring && !body.iter().any(module_scope_needs) {
        return Ok(Some((compile(text, Mode::BlockExpr)?, vm.ctx.none())));
    }
    use ruff_pin_ts::Ranged;
    let (start, end) = (usize::from(last.start()), usize::from(last.end()));
    // Padded to its line, so that errors in it name the cell's line numbers.
    let expression = format!("{}{}", "\n".repeat(text[..start].matches('\n').count()), &text[start..end]);
    Ok(Some((compile(&text[..start], Mode::Exec)?, compile(&expression, Mode::Eval)?)))
}

/// Whether `stmt` (at module level) needs what only a module's compilation sets up: an
/// annotated assignment, in a block or not (the module's `__annotations__` and its
/// conditional-annotations cell), or a `__future__` import. Function and class bodies are
/// scopes of their own and compile alike either way.
fn module_scope_needs(stmt: &ruff_pin_ast::Stmt) -> bool {
    use ruff_pin_ast::visitor::{Visitor, walk_stmt};
    #[derive(Default)]
    struct Finder(bool);
    impl<'a> Visitor<'a> for Finder {
        fn visit_stmt(&mut self, stmt: &'a ruff_pin_ast::Stmt) {
            use ruff_pin_ast::Stmt;
            match stmt {
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                Stmt::AnnAssign(_) => self.0 = true,
                Stmt::ImportFrom(from) if from.module.as_ref().is_some_and(|m| m.as_str() == "__future__") => {
                    self.0 = true
                }
                _ => walk_stmt(self, stmt),
            }
        }
    }
    let mut finder = Finder::default();
    finder.visit_stmt(stmt);
    finder.0
}
