//! `sum` as CPython 3.12+ computes it: ints in a machine integer, floats compensated.
//!
//! RustPython's builtin adds item by item through the `+` protocol, so summing a million
//! ints makes and frees a million intermediate int objects, and a float total drifts
//! (`sum([0.1] * 10)` is `0.9999999999999999` there, `1.0` in CPython since 3.12). CPython
//! keeps an `i64` while the items are exact ints (or bools) and the total fits, then a
//! Neumaier-compensated `f64` while the total is an exact float, and hands anything else to
//! `+` at exactly that point; this does the same, so results, errors and their order are
//! CPython's. Upstream, this belongs in RustPython's `builtins.sum`. A generator's items are
//! added where it yields them (`PyGenerator::drain`), not by suspending and resuming it for each.

use rustpython_vm::FromArgs;
use rustpython_vm::builtins::{PyByteArray, PyBytes, PyFloat, PyGenerator, PyInt, PyStr};
use rustpython_vm::function::OptionalArg;
use rustpython_vm::protocol::{PyIter, PyIterIter, PyIterReturn};
use rustpython_vm::{AsObject, PyObject, PyObjectRef, PyRef, PyResult, VirtualMachine};

#[derive(FromArgs)]
pub(crate) struct SumArgs {
    #[pyarg(positional)]
    iterable: PyObjectRef,
    #[pyarg(any, optional)]
    start: OptionalArg<PyObjectRef>,
}

/// `sum(iterable, /, start=0)`.
pub(crate) fn sum(SumArgs { iterable, start }: SumArgs, vm: &VirtualMachine) -> PyResult {
    // First, as CPython: `sum(1, "a")` is about the 1.
    let mut items = Items::new(iterable.get_iter(vm)?, vm);
    let start = start.unwrap_or_else(|| vm.ctx.new_int(0).into());
    if start.downcast_ref::<PyStr>().is_some() {
        return Err(vm.new_type_error("sum() can't sum strings [use ''.join(seq) instead]"));
    }
    if start.downcast_ref::<PyBytes>().is_some() {
        return Err(vm.new_type_error("sum() can't sum bytes [use b''.join(seq) instead]"));
    }
    if start.downcast_ref::<PyByteArray>().is_some() {
        return Err(vm.new_type_error("sum() can't sum bytearray [use b''.join(seq) instead]"));
    }
    let mut total = start;
    if total.class().is(vm.ctx.types.int_type)
        && let Some(small) = machine_int(&total)
    {
        match sum_ints(small, &mut items, vm)? {
            Sum::Done(result) => return Ok(result),
            Sum::Continue(next) => total = next,
        }
    }
    if total.class().is(vm.ctx.types.float_type)
        && let Some(float) = total.downcast_ref::<PyFloat>()
    {
        match sum_floats(float.to_f64(), &mut items, vm)? {
            Sum::Done(result) => return Ok(result),
            Sum::Continue(next) => total = next,
        }
    }
    for item in items.iter {
        total = vm._add(&total, &*item?)?;
    }
    Ok(total)
}

/// Where a fast path stopped: at the end of the items, or with the total it handed to `+`.
enum Sum {
    Done(PyObjectRef),
    Continue(PyObjectRef),
}

/// The items being summed, and the generator they come from when they come from one.
struct Items<'a> {
    iter: PyIterIter<'a, PyObjectRef>,
    generator: Option<PyRef<PyGenerator>>,
}

impl<'a> Items<'a> {
    fn new(iter: PyIter, vm: &'a VirtualMachine) -> Self {
        let generator = iter.as_object().downcast_ref_if_exact::<PyGenerator>(vm).map(|g| g.to_owned());
        Self { iter: iter.into_iter(vm), generator }
    }

    /// Hands items to `add` until it declines one, which is returned, or they run out (`None`).
    ///
    /// From a generator (`sum(x * x for x in xs)`), the items are taken where it yields them
    /// (`PyGenerator::drain`): `add` runs no Python code, so it may run inside the generator's
    /// frame, and the item it declines is yielded as usual, the generator suspended after it.
    /// `add` must answer the same for the same item: a declined one is offered again here.
    /// Only a plain number is taken in the frame, where the item is then freed: an int
    /// subclass may have a `__del__`, which must run with the generator suspended.
    fn feed(&mut self, mut add: impl FnMut(&PyObject) -> bool, vm: &VirtualMachine) -> PyResult<Option<PyObjectRef>> {
        if let Some(generator) = &self.generator {
            loop {
                let mut take =
                    |item: PyObjectRef| if plain_number(&item, vm) && add(&item) { None } else { Some(item) };
                match PyGenerator::drain(generator, &mut take, vm)? {
                    PyIterReturn::StopIteration(_) => return Ok(None),
                    // Declined, or yielded under tracing without being offered.
                    PyIterReturn::Return(item) if add(&item) => {}
                    PyIterReturn::Return(item) => return Ok(Some(item)),
                }
            }
        }
        for item in &mut self.iter {
            let item = item?;
            if !add(&item) {
                return Ok(Some(item));
            }
        }
        Ok(None)
    }
}

fn sum_ints(mut total: i64, items: &mut Items<'_>, vm: &VirtualMachine) -> PyResult<Sum> {
    let add = |item: &PyObject| {
        let class = item.class();
        let exact = class.is(vm.ctx.types.int_type) || class.is(vm.ctx.types.bool_type);
        match exact.then(|| machine_int(item)).flatten().and_then(|n| total.checked_add(n)) {
            Some(next) => {
                total = next;
                true
            }
            None => false,
        }
    };
    match items.feed(add, vm)? {
        None => Ok(Sum::Done(vm.ctx.new_int(total).into())),
        Some(item) => Ok(Sum::Continue(vm._add(vm.ctx.new_int(total).as_object(), &item)?)),
    }
}

fn sum_floats(mut total: f64, items: &mut Items<'_>, vm: &VirtualMachine) -> PyResult<Sum> {
    // Neumaier's improvement of Kahan summation, as CPython's: `compensation` gathers the
    // low-order bits each addition loses and is added once at the end.
    let mut compensation = 0.0;
    let finish = |total: f64, compensation: f64| {
        // Adding it to an infinite or overflowed total would make a NaN; zero keeps -0.0.
        if compensation != 0.0 && compensation.is_finite() { total + compensation } else { total }
    };
    let add = |item: &PyObject| {
        let value = if item.class().is(vm.ctx.types.float_type) {
            item.downcast_ref::<PyFloat>().map(|f| f.to_f64())
        } else {
            // Any int, subclasses included (CPython's `PyLong_Check`), that fits a C long.
            machine_int(item).map(|n| n as f64)
        };
        let Some(x) = value else { return false };
        let next = total + x;
        compensation += if total.abs() >= x.abs() { (total - next) + x } else { (x - next) + total };
        total = next;
        true
    };
    match items.feed(add, vm)? {
        None => Ok(Sum::Done(vm.ctx.new_float(finish(total, compensation)).into())),
        Some(item) => {
            let total = vm.ctx.new_float(finish(total, compensation));
            Ok(Sum::Continue(vm._add(total.as_object(), &item)?))
        }
    }
}

/// An exact int, bool or float: freeing one runs no Python code.
fn plain_number(item: &PyObject, vm: &VirtualMachine) -> bool {
    let class = item.class();
    class.is(vm.ctx.types.int_type) || class.is(vm.ctx.types.bool_type) || class.is(vm.ctx.types.float_type)
}

/// The value of an int (of any int class) that fits an `i64`, read as the interpreter's own
/// `+` reads its operands: the generic conversion (malachite's `try_from_signed`, not inlined)
/// was 8% of a sum of squares' samples, once per item.
fn machine_int(int: &PyObject) -> Option<i64> {
    int.downcast_ref::<PyInt>()?.try_to_i64_fast()
}
