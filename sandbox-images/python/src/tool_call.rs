//! Tools and the calls they return, native for the common case: one dict in, one call awaited alone.

/// `_sluice_abi.ToolCall`, the base of the runtime's `_ToolCall` (`runtime/_sluice_tools.py`).
///
/// A script's `await tool(...)` with nothing else runnable is the hot path of sequential
/// scripts. Made in Python, it cost an `__await__` generator frame, the checks of `_start` and
/// the call table's numbering, about 6 µs a call; here it is one native method that asks
/// the host and hands back an iterator that is already done. Everything else (a call that
/// must wait in the loop, a gather, `create_task`, a failure, files) stays in Python, which
/// the native `__await__` defers to.
#[rustpython_vm::pymodule(sub, name = "_sluice_abi")]
pub(crate) mod tool_calls {
    use rustpython_vm::{
        AsObject, FromArgs, Py, PyObjectRef, PyPayload, PyRef, PyResult, Traverse, VirtualMachine,
        builtins::{PyStrInterned, PyType, PyTypeRef},
        common::lock::PyRwLock,
        function::FuncArgs,
        function::PySetterValue,
        protocol::PyIterReturn,
        pyclass,
        types::{Callable, Constructor, IterNext, Iterable, SelfIter},
    };
    use std::cell::RefCell;

    /// What a native `await` needs to make a call at once, handed in once by the runtime
    /// (`enable_lone_calls`).
    struct LoneCalls {
        /// `SluiceLoop`: only its loop hands calls to the host when nothing else can run.
        loop_type: PyTypeRef,
        /// The runtime's one call table (`_sluice_calls.calls`): numbering and what is out.
        calls: PyObjectRef,
        /// The `_fut` of a call that was made (`_sluice_tools._CONSUMED`).
        consumed: PyObjectRef,
        /// The attribute names looked at on every call, interned once.
        names: Names,
    }

    #[derive(Clone, Copy)]
    struct Names {
        ready: &'static PyStrInterned,
        timers: &'static PyStrInterned,
        unsent: &'static PyStrInterned,
        sent: &'static PyStrInterned,
        next_seq: &'static PyStrInterned,
    }

    thread_local! {
        static LONE_CALLS: RefCell<Option<LoneCalls>> = const { RefCell::new(None) };
    }

    /// Lets `ToolCall.__await__` make lone calls itself; until then every await takes the
    /// runtime's path.
    #[pyfunction]
    fn enable_lone_calls(loop_type: PyTypeRef, calls: PyObjectRef, consumed: PyObjectRef, vm: &VirtualMachine) {
        let names = Names {
            ready: vm.ctx.intern_str("_ready"),
            timers: vm.ctx.intern_str("_timers"),
            unsent: vm.ctx.intern_str("unsent"),
            sent: vm.ctx.intern_str("sent"),
            next_seq: vm.ctx.intern_str("next_seq"),
        };
        LONE_CALLS.with(|lone| *lone.borrow_mut() = Some(LoneCalls { loop_type, calls, consumed, names }));
    }

    #[derive(FromArgs)]
    struct ToolCallArgs {
        #[pyarg(positional)]
        name: PyObjectRef,
        #[pyarg(positional)]
        input_json: PyObjectRef,
        #[pyarg(positional)]
        error: PyObjectRef,
        #[pyarg(any, default = false)]
        in_place: bool,
    }

    /// One tool call: its name, its input as JSON text (or the error its arguments caused)
    /// and where it stands (`_fut`: `None` until made, then the runtime's future or marker).
    #[pyattr]
    #[pyclass(name = "ToolCall", module = "_sluice_abi", traverse)]
    #[derive(Debug, PyPayload)]
    struct ToolCall {
        name: PyObjectRef,
        input_json: PyObjectRef,
        error: PyObjectRef,
        /// The host answers this tool at once (`GuestTool::answered_in_place`).
        #[pytraverse(skip)]
        in_place: bool,
        fut: PyRwLock<PyObjectRef>,
    }

    impl Constructor for ToolCall {
        type Args = ToolCallArgs;

        fn py_new(_cls: &Py<PyType>, args: Self::Args, vm: &VirtualMachine) -> PyResult<Self> {
            Ok(Self::new(args.name, args.input_json, args.error, args.in_place, vm))
        }
    }

    #[pyclass(flags(BASETYPE, HAS_WEAKREF), with(Constructor))]
    impl ToolCall {
        #[pygetset]
        fn _name(zelf: &Py<Self>) -> PyObjectRef {
            zelf.name.clone()
        }

        #[pygetset]
        fn _input_json(zelf: &Py<Self>) -> PyObjectRef {
            zelf.input_json.clone()
        }

        #[pygetset]
        fn _error(zelf: &Py<Self>) -> PyObjectRef {
            zelf.error.clone()
        }

        #[pygetset]
        fn _fut(zelf: &Py<Self>) -> PyObjectRef {
            zelf.fut.read().clone()
        }

        #[pygetset(setter)]
        fn set__fut(zelf: &Py<Self>, value: PySetterValue, vm: &VirtualMachine) {
            *zelf.fut.write() = match value {
                PySetterValue::Assign(value) => value,
                PySetterValue::Delete => vm.ctx.none(),
            };
        }

        /// `await call`: made here when the call can be made at once (`made_at_once`); the
        /// runtime settles any answer but the call's text (`_answered`) and makes every other
        /// call (`_await_slow`).
        #[pymethod]
        fn __await__(zelf: PyRef<Self>, vm: &VirtualMachine) -> PyResult {
            match zelf.made_at_once(vm)? {
                None => vm.call_method(zelf.as_object(), "_await_slow", ()),
                Some(MadeAtOnce::Text(text)) => {
                    Ok(Answered { value: PyRwLock::new(Some(text)) }.into_ref(&vm.ctx).into())
                }
                Some(MadeAtOnce::Answer(seq, answer)) => vm.call_method(zelf.as_object(), "_answered", (seq, answer)),
            }
        }

        /// The same for the runtime's `_start` (`send`, as `create_task` drives a call):
        /// `None` when the call cannot be made at once, else its text or `(seq, answer)`.
        #[pymethod]
        fn _call_at_once(zelf: PyRef<Self>, vm: &VirtualMachine) -> PyResult {
            Ok(match zelf.made_at_once(vm)? {
                None => vm.ctx.none(),
                Some(MadeAtOnce::Text(text)) => text,
                Some(MadeAtOnce::Answer(seq, answer)) => vm.new_pyobj((seq, answer)),
            })
        }
    }

    /// A call made at once: the host's answer was the call's text and nothing else, or it was
    /// anything else (a failure, files, no result yet), read as a frame for the runtime.
    enum MadeAtOnce {
        Text(PyObjectRef),
        Answer(u64, PyObjectRef),
    }

    impl ToolCall {
        /// A call not made yet (`_fut` is `None`).
        fn new(
            name: PyObjectRef,
            input_json: PyObjectRef,
            error: PyObjectRef,
            in_place: bool,
            vm: &VirtualMachine,
        ) -> Self {
            Self { name, input_json, error, in_place, fut: PyRwLock::new(vm.ctx.none()) }
        }

        /// Makes the call and returns what the host answered, when nothing but this await
        /// could run before the answer: a fresh call to a tool the host answers in
        /// place, inside a running `SluiceLoop` with no callback ready, no timer set and no
        /// call out or waiting to go (the loop would hand the host this one call and resume
        /// here, so ask the host directly). `None` when the runtime must make it.
        fn made_at_once(&self, vm: &VirtualMachine) -> PyResult<Option<MadeAtOnce>> {
            if !self.in_place || !vm.is_none(&self.error) || !vm.is_none(&self.fut.read()) {
                return Ok(None);
            }
            let Some(running) = vm.asyncio_running_loop.borrow().clone() else { return Ok(None) };
            let Some((calls, consumed, names)) = LONE_CALLS.with(|lone| {
                let lone = lone.borrow();
                let lone = lone.as_ref()?;
                running.class().is(&lone.loop_type).then(|| (lone.calls.clone(), lone.consumed.clone(), lone.names))
            }) else {
                return Ok(None);
            };
            let busy = |owner: &PyObjectRef, name: &'static PyStrInterned| -> PyResult<bool> {
                owner.get_attr(name, vm)?.try_to_bool(vm)
            };
            if busy(&running, names.ready)?
                || busy(&running, names.timers)?
                || busy(&calls, names.unsent)?
                || busy(&calls, names.sent)?
            {
                return Ok(None);
            }
            let seq: u64 = calls.get_attr(names.next_seq, vm)?.try_into_value(vm)?;
            calls.set_attr(names.next_seq, vm.ctx.new_int(seq + 1), vm)?;
            *self.fut.write() = consumed;
            let frame = crate::lone_call_frame(seq, &self.name, &self.input_json, vm)?;
            let answer = crate::wait_in_host(&frame, vm)?;
            let text = crate::lone_result_text(&answer, seq)
                .and_then(|(text, chars)| crate::result_text(text, Some(chars), vm));
            Ok(Some(match text {
                Some(text) => MadeAtOnce::Text(text),
                None => MadeAtOnce::Answer(seq, crate::read_frame(vm, &answer)?),
            }))
        }
    }

    /// `_sluice_abi.Tool`, the base of the runtime's `_Tool`: what a tool's global is bound to.
    ///
    /// Calling a tool with one dict, the way scripts almost always do, makes the call here:
    /// the dict becomes JSON text and the runtime's call class is instantiated directly, where
    /// a Python function cost a frame, its `*args`/`**kwargs` and a class call (about 1 µs of
    /// a sequential call's 10). Every other way of calling goes to the runtime's `_bind`.
    #[pyattr]
    #[pyclass(name = "Tool", module = "_sluice_abi", traverse)]
    #[derive(Debug, PyPayload)]
    struct Tool {
        name: PyObjectRef,
        /// The runtime's `_ToolCall`, a subclass of `ToolCall`: the class of every call.
        call_type: PyTypeRef,
        #[pytraverse(skip)]
        in_place: bool,
    }

    #[derive(FromArgs)]
    struct ToolArgs {
        #[pyarg(positional)]
        name: PyObjectRef,
        #[pyarg(positional)]
        call_type: PyTypeRef,
        #[pyarg(positional)]
        in_place: bool,
    }

    impl Constructor for Tool {
        type Args = ToolArgs;

        /// A `call_type` that is not a `ToolCall` subclass is refused when the tool is called
        /// (`into_ref_with_type` checks it).
        fn py_new(_cls: &Py<PyType>, args: Self::Args, _vm: &VirtualMachine) -> PyResult<Self> {
            Ok(Self { name: args.name, call_type: args.call_type, in_place: args.in_place })
        }
    }

    #[pyclass(flags(BASETYPE), with(Constructor, Callable))]
    impl Tool {
        #[pygetset]
        fn _name(zelf: &Py<Self>) -> PyObjectRef {
            zelf.name.clone()
        }

        #[pygetset]
        fn _in_place(zelf: &Py<Self>) -> bool {
            zelf.in_place
        }
    }

    impl Callable for Tool {
        type Args = FuncArgs;

        fn call(zelf: &Py<Self>, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
            if let ([input], true) = (args.args.as_slice(), args.kwargs.is_empty())
                && input.class().is(vm.ctx.types.dict_type)
                && let Ok(input_json) = crate::json_text(vm, input)
            {
                let input_json = vm.ctx.new_str(input_json).into();
                let call = ToolCall::new(zelf.name.clone(), input_json, vm.ctx.none(), zelf.in_place, vm);
                return Ok(call.into_ref_with_type(vm, zelf.call_type.clone())?.into());
            }
            // Anything else, a dict that is not JSON data included: the runtime binds the
            // arguments and words the error.
            vm.call_method(zelf.as_object(), "_bind", args)
        }
    }

    /// The iterator `await` gets for a call answered at once: done on its first step, with
    /// the answer as its value (no frame, no `StopIteration` object on the way).
    #[pyattr]
    #[pyclass(name = "Answered", module = "_sluice_abi", traverse)]
    #[derive(Debug, PyPayload)]
    struct Answered {
        value: PyRwLock<Option<PyObjectRef>>,
    }

    impl Constructor for Answered {
        type Args = (PyObjectRef,);

        fn py_new(_cls: &Py<PyType>, (value,): Self::Args, _vm: &VirtualMachine) -> PyResult<Self> {
            Ok(Self { value: PyRwLock::new(Some(value)) })
        }
    }

    #[pyclass(with(Constructor, IterNext, Iterable))]
    impl Answered {}

    impl SelfIter for Answered {}

    impl IterNext for Answered {
        fn next(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<PyIterReturn> {
            Ok(PyIterReturn::StopIteration(zelf.value.write().take()))
        }
    }
}
