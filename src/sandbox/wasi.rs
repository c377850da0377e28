//! The guest's `wasi_snapshot_preview1`: stdio into bounded captures, the host's clock and
//! seeded randomness, and nothing else.
//!
//! There are no preopened directories, no sockets, no environment and no arguments. Every
//! other WASI function the guest imports is defined to fail with `ENOTCAPABLE`, so an attempt
//! surfaces in Python as an `OSError` and never reaches a host resource.

use super::guest_memory::{self, GuestMemoryError, GuestView};
use super::state::HostState;
use wasmtime::{Caller, Linker, Module, Val, ValType};

const WASI: &str = "wasi_snapshot_preview1";

const ERRNO_SUCCESS: i32 = 0;
const ERRNO_BADF: i32 = 8;
const ERRNO_FAULT: i32 = 21;
const ERRNO_INVAL: i32 = 28;
const ERRNO_NOTCAPABLE: i32 = 76;
const ERRNO_SPIPE: i32 = 70;

const FILETYPE_CHARACTER_DEVICE: u8 = 2;
const EVENTTYPE_CLOCK: u8 = 0;
const SUBCLOCKFLAG_ABSTIME: u16 = 1;
const SUBSCRIPTION_BYTES: u32 = 48;
const EVENT_BYTES: u32 = 32;

/// Bounds on guest-given counts before the host walks them.
const MAX_IOVECS: u32 = 1024;
const MAX_POLL_SUBSCRIPTIONS: u32 = 64;

/// The functions defined below; every other WASI import is denied.
const IMPLEMENTED: &[&str] = &[
    "args_sizes_get",
    "environ_sizes_get",
    "args_get",
    "environ_get",
    "sched_yield",
    "fd_prestat_get",
    "clock_res_get",
    "clock_time_get",
    "random_get",
    "fd_fdstat_get",
    "fd_write",
    "fd_read",
    "poll_oneoff",
    "proc_exit",
    "fd_filestat_get",
    "fd_seek",
];

/// Defines the WASI functions `module` imports.
pub(super) fn add_to_linker(linker: &mut Linker<HostState>, module: &Module) -> wasmtime::Result<()> {
    linker.func_wrap(WASI, "args_sizes_get", |mut caller: Caller<'_, HostState>, count: u32, size: u32| {
        with_view(&mut caller, |view, _| write_pair(view, count, size, 0, 0))
    })?;
    linker.func_wrap(WASI, "environ_sizes_get", |mut caller: Caller<'_, HostState>, count: u32, size: u32| {
        with_view(&mut caller, |view, _| write_pair(view, count, size, 0, 0))
    })?;
    linker.func_wrap(WASI, "args_get", |_: Caller<'_, HostState>, _: u32, _: u32| ERRNO_SUCCESS)?;
    linker.func_wrap(WASI, "environ_get", |_: Caller<'_, HostState>, _: u32, _: u32| ERRNO_SUCCESS)?;
    linker.func_wrap(WASI, "sched_yield", |_: Caller<'_, HostState>| ERRNO_SUCCESS)?;
    linker.func_wrap(WASI, "fd_prestat_get", |_: Caller<'_, HostState>, _: u32, _: u32| ERRNO_BADF)?;
    linker.func_wrap(WASI, "clock_res_get", |mut caller: Caller<'_, HostState>, _id: u32, out: u32| {
        with_view(&mut caller, |view, _| {
            view.write_u64(out.into(), super::state::CLOCK_READ_STEP_NS)?;
            Ok(ERRNO_SUCCESS)
        })
    })?;
    linker.func_wrap(
        WASI,
        "clock_time_get",
        |mut caller: Caller<'_, HostState>, _id: u32, _precision: u64, out: u32| {
            with_view(&mut caller, |view, state| {
                view.write_u64(out.into(), state.clock.read())?;
                Ok(ERRNO_SUCCESS)
            })
        },
    )?;
    linker.func_wrap(WASI, "random_get", |mut caller: Caller<'_, HostState>, buf: u32, len: u32| {
        with_view(&mut caller, |view, state| {
            state.random.fill(view.slice_mut(buf.into(), len.into())?);
            Ok(ERRNO_SUCCESS)
        })
    })?;
    linker.func_wrap(WASI, "fd_fdstat_get", |mut caller: Caller<'_, HostState>, fd: u32, out: u32| {
        if fd > 2 {
            return ERRNO_BADF;
        }
        with_view(&mut caller, |view, _| {
            let mut stat = [0u8; 24];
            stat[0] = FILETYPE_CHARACTER_DEVICE;
            stat[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
            view.write_bytes(out.into(), &stat)?;
            Ok(ERRNO_SUCCESS)
        })
    })?;
    linker.func_wrap(
        WASI,
        "fd_seek",
        |_: Caller<'_, HostState>, fd: u32, _offset: i64, _whence: u32, _out: u32| {
            if fd > 2 { ERRNO_BADF } else { ERRNO_SPIPE }
        },
    )?;
    linker.func_wrap(WASI, "fd_filestat_get", |mut caller: Caller<'_, HostState>, fd: u32, out: u32| {
        if fd > 2 {
            return ERRNO_BADF;
        }
        with_view(&mut caller, |view, _| {
            let mut stat = [0u8; 64];
            stat[16] = FILETYPE_CHARACTER_DEVICE;
            view.write_bytes(out.into(), &stat)?;
            Ok(ERRNO_SUCCESS)
        })
    })?;
    linker.func_wrap(
        WASI,
        "fd_write",
        |mut caller: Caller<'_, HostState>, fd: u32, iovs: u32, iovs_len: u32, written: u32| {
            if fd != 1 && fd != 2 {
                return ERRNO_BADF;
            }
            with_view(&mut caller, |view, state| {
                let mut output = state.output.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                let total = for_each_iovec(view, iovs, iovs_len, |bytes| output.push(fd, bytes))?;
                view.write_u32(written.into(), total)?;
                Ok(ERRNO_SUCCESS)
            })
        },
    )?;
    linker.func_wrap(
        WASI,
        "fd_read",
        |mut caller: Caller<'_, HostState>, fd: u32, _iovs: u32, _iovs_len: u32, read: u32| {
            if fd != 0 {
                return ERRNO_BADF;
            }
            // stdin is always at its end: `input()` raises EOFError.
            with_view(&mut caller, |view, _| {
                view.write_u32(read.into(), 0)?;
                Ok(ERRNO_SUCCESS)
            })
        },
    )?;
    linker.func_wrap(
        WASI,
        "poll_oneoff",
        |mut caller: Caller<'_, HostState>, subs: u32, events: u32, count: u32, written: u32| {
            with_view(&mut caller, |view, state| poll_oneoff(view, state, subs, events, count, written))
        },
    )?;
    linker.func_wrap(WASI, "proc_exit", |mut caller: Caller<'_, HostState>, code: u32| -> wasmtime::Result<()> {
        caller.data_mut().exit_code = Some(code);
        Err(wasmtime::Error::msg(format!("guest called proc_exit({code})")))
    })?;
    deny_the_rest(linker, module)
}

/// Every other WASI import fails cleanly with `ENOTCAPABLE`.
fn deny_the_rest(linker: &mut Linker<HostState>, module: &Module) -> wasmtime::Result<()> {
    for import in module.imports() {
        if import.module() != WASI {
            continue;
        }
        let Some(ty) = import.ty().func().cloned() else {
            continue;
        };
        if IMPLEMENTED.contains(&import.name()) {
            continue;
        }
        let returns_errno = ty.results().len() == 1 && matches!(ty.results().next(), Some(ValType::I32));
        let name = import.name().to_owned();
        linker.func_new(WASI, import.name(), ty, move |_, _, results| {
            if !returns_errno {
                return Err(wasmtime::Error::msg(format!("WASI {name} is not available in the sandbox")));
            }
            results[0] = Val::I32(ERRNO_NOTCAPABLE);
            Ok(())
        })?;
    }
    Ok(())
}

/// Runs `f` with a checked view of guest memory; bad pointers become `EFAULT`.
fn with_view(
    caller: &mut Caller<'_, HostState>,
    f: impl FnOnce(&mut GuestView<'_>, &mut HostState) -> Result<i32, GuestMemoryError>,
) -> i32 {
    let Some(memory) = guest_memory::exported(caller) else {
        return ERRNO_FAULT;
    };
    let (mut view, state) = guest_memory::view(&memory, caller);
    f(&mut view, state).unwrap_or(ERRNO_FAULT)
}

fn write_pair(view: &mut GuestView<'_>, a_ptr: u32, b_ptr: u32, a: u32, b: u32) -> Result<i32, GuestMemoryError> {
    view.write_u32(a_ptr.into(), a)?;
    view.write_u32(b_ptr.into(), b)?;
    Ok(ERRNO_SUCCESS)
}

/// Walks a guest iovec array, handing each buffer to `sink` without copying it first.
fn for_each_iovec(
    view: &GuestView<'_>,
    iovs: u32,
    count: u32,
    mut sink: impl FnMut(&[u8]),
) -> Result<u32, GuestMemoryError> {
    guest_memory::check_limit(u64::from(count), MAX_IOVECS as usize)?;
    let mut total: u32 = 0;
    for i in 0..u64::from(count) {
        let entry = u64::from(iovs) + i * 8;
        let (ptr, len) = (view.read_u32(entry)?, view.read_u32(entry + 4)?);
        sink(view.slice(ptr.into(), len.into(), usize::MAX)?);
        total = total.saturating_add(len);
    }
    Ok(total)
}

/// Sleeps move the virtual clock instead of waiting; fd subscriptions are refused.
fn poll_oneoff(
    view: &mut GuestView<'_>,
    state: &mut HostState,
    subs: u32,
    events: u32,
    count: u32,
    written: u32,
) -> Result<i32, GuestMemoryError> {
    if count == 0 || count > MAX_POLL_SUBSCRIPTIONS {
        return Ok(ERRNO_INVAL);
    }
    let now = state.clock.now_ns;
    let mut clocks = Vec::with_capacity(count as usize);
    let mut refused = Vec::new();
    for i in 0..u64::from(count) {
        let sub = u64::from(subs) + i * u64::from(SUBSCRIPTION_BYTES);
        let userdata = view.read_u64(sub)?;
        let tag = view.read_u8(sub + 8)?;
        if tag == EVENTTYPE_CLOCK {
            let timeout = view.read_u64(sub + 24)?;
            let absolute = view.read_u16(sub + 40)? & SUBCLOCKFLAG_ABSTIME != 0;
            let due = if absolute { timeout } else { now.saturating_add(timeout) };
            clocks.push((userdata, due));
        } else {
            refused.push((userdata, tag));
        }
    }
    let mut out = Vec::new();
    if refused.is_empty() {
        let wake = clocks.iter().map(|&(_, due)| due).min().unwrap_or(now);
        state.clock.set_at_least(wake);
        out.extend(
            clocks.iter().filter(|&&(_, due)| due <= wake).map(|&(userdata, _)| (userdata, EVENTTYPE_CLOCK, 0u16)),
        );
    } else {
        out.extend(refused.iter().map(|&(userdata, tag)| (userdata, tag, ERRNO_BADF as u16)));
    }
    for (i, (userdata, kind, error)) in out.iter().enumerate() {
        let mut event = [0u8; EVENT_BYTES as usize];
        event[0..8].copy_from_slice(&userdata.to_le_bytes());
        event[8..10].copy_from_slice(&error.to_le_bytes());
        event[10] = *kind;
        view.write_bytes(u64::from(events) + i as u64 * u64::from(EVENT_BYTES), &event)?;
    }
    view.write_u32(written.into(), out.len() as u32)?;
    Ok(ERRNO_SUCCESS)
}
