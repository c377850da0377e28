//! The `sluice_v1` contract between host and guest (written down in `sandbox-images/README.md`):
//! the imports the host provides and the exports it calls; the frames they carry are in
//! [`super::frames`].

use super::frames::{FrameError, MAX_GUEST_FRAME_BYTES};
use super::guest_memory;
use super::runtime::EpochTicker;
use super::state::{BlockedCall, HostState, Waiter};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::oneshot;
use wasmtime::{AsContextMut, Caller, Global, Instance, Linker, Memory, Mutability, TypedFunc};

pub(crate) const ABI_MODULE: &str = "sluice_v1";

/// The guest's exports, looked up once per instance.
pub(crate) struct GuestExports {
    memory: Memory,
    input: TypedFunc<u32, u32>,
    step: TypedFunc<u32, u64>,
    /// The instance's mutable globals, in export order. The image exports every global (see
    /// `image::with_exports_of`), so these and the memory are all the state an instance has
    /// besides its table, which the guest never changes (wizer's contract too).
    globals: Vec<Global>,
    /// Ticks while a call into this instance runs: what interrupts it.
    ticker: Arc<EpochTicker>,
}

impl GuestExports {
    pub(crate) fn new(
        instance: &Instance,
        mut store: impl AsContextMut,
        ticker: Arc<EpochTicker>,
    ) -> wasmtime::Result<Self> {
        let memory =
            instance.get_memory(&mut store, "memory").ok_or_else(|| wasmtime::Error::msg("guest exports no memory"))?;
        // By the module's export types: taking every export from the instance would also take
        // its function table, which wasmtime then fills in whole (a millisecond per instance).
        let module = instance.module(&store).clone();
        let globals = module
            .exports()
            .filter(|export| export.ty().global().is_some_and(|global| global.mutability() == Mutability::Var))
            .filter_map(|export| instance.get_global(&mut store, export.name()))
            .collect();
        Ok(Self {
            memory,
            input: instance.get_typed_func(&mut store, "sluice_input")?,
            step: instance.get_typed_func(&mut store, "sluice_step")?,
            globals,
            ticker,
        })
    }

    pub(crate) fn memory(&self) -> &Memory {
        &self.memory
    }

    /// Sets this instance's mutable globals to `other`'s (an instance of the same image);
    /// `false` if their globals do not pair up, and the instance is then not to be reused.
    pub(crate) fn copy_globals_from(
        &self,
        mut store: impl AsContextMut,
        other: &GuestExports,
        mut other_store: impl AsContextMut,
    ) -> bool {
        self.globals.len() == other.globals.len()
            && self.globals.iter().zip(&other.globals).all(|(global, source)| {
                let value = source.get(&mut other_store);
                global.set(&mut store, value).is_ok()
            })
    }

    /// Hands one request frame to the guest and returns its response frame.
    pub(crate) async fn step(
        &self,
        mut store: impl AsContextMut<Data = HostState>,
        frame: &[u8],
    ) -> Result<Vec<u8>, StepError> {
        let len = u32::try_from(frame.len())
            .map_err(|_| StepError::Frame(FrameError::Malformed("request too large".into())))?;
        let _running = self.ticker.guest_running();
        let ptr = self.input.call_async(&mut store, len).await.map_err(StepError::Trap)?;
        guest_memory::write(&self.memory, &mut store, ptr, frame).map_err(|e| StepError::Frame(e.into()))?;
        let packed = self.step.call_async(&mut store, len).await.map_err(StepError::Trap)?;
        let (out_ptr, out_len) = ((packed >> 32) as u32, packed as u32);
        guest_memory::read(&self.memory, &store, out_ptr, out_len, MAX_GUEST_FRAME_BYTES)
            .map_err(|e| StepError::Frame(e.into()))
    }
}

/// Why a step produced no response frame.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StepError {
    #[error("guest trapped: {0}")]
    Trap(wasmtime::Error),
    #[error(transparent)]
    Frame(FrameError),
}

/// Defines the `sluice_v1` imports.
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.func_wrap(ABI_MODULE, "bootstrap_len", |caller: Caller<'_, HostState>| -> i32 {
        caller.data().bootstrap.as_ref().map_or(-1, |b| b.len() as i32)
    })?;
    linker.func_wrap(ABI_MODULE, "bootstrap_read", |mut caller: Caller<'_, HostState>, ptr: u32, len: u32| -> i32 {
        let Some(boot) = caller.data_mut().bootstrap.take() else {
            return -1;
        };
        hand_over(&mut caller, ptr, len, &boot)
    })?;
    linker.func_wrap(ABI_MODULE, "take", |mut caller: Caller<'_, HostState>, ptr: u32, len: u32| -> i32 {
        let Some(answer) = caller.data_mut().answer.take() else {
            return -1;
        };
        hand_over(&mut caller, ptr, len, &answer)
    })?;
    linker.func_wrap_async(ABI_MODULE, "wait", |mut caller: Caller<'_, HostState>, (ptr, len): (u32, u32)| {
        Box::new(async move { wait_for_answer(&mut caller, ptr, len).await })
    })?;
    Ok(())
}

/// Copies `bytes` to the guest if it asked for exactly their length.
fn hand_over(caller: &mut Caller<'_, HostState>, ptr: u32, len: u32, bytes: &[u8]) -> i32 {
    let Some(memory) = guest_memory::exported(caller) else { return -1 };
    if len as usize != bytes.len() || guest_memory::write(&memory, caller, ptr, bytes).is_err() {
        return -1;
    }
    len as i32
}

/// The blocking path: the guest waits inside this import until the host answers.
async fn wait_for_answer(caller: &mut Caller<'_, HostState>, ptr: u32, len: u32) -> i32 {
    let Some(memory) = guest_memory::exported(caller) else { return -1 };
    let Ok(frame) = guest_memory::read(&memory, &*caller, ptr, len, MAX_GUEST_FRAME_BYTES) else {
        return -1;
    };
    let started = Instant::now();
    let answer: Option<super::state::WaitAnswer> = match &mut caller.data_mut().waiter {
        Waiter::Closed => None,
        Waiter::Replay(answers) => answers.pop_front(),
        Waiter::Live(sender) => {
            let sender = sender.clone();
            let (answer, receive) = oneshot::channel();
            if sender.send(BlockedCall { frame, answer }).await.is_err() { None } else { receive.await.ok() }
        }
    };
    // Epoch ticks that passed while the guest waited are not its run time: count the next
    // tick from now, or the first function it enters would take a profiler sample for the
    // whole wait and a needless yield to the runtime.
    caller.as_context_mut().set_epoch_deadline(1);
    let state = caller.data_mut();
    let waited = started.elapsed();
    state.deadline += waited;
    state.waited += waited;
    match answer {
        Some((answer, now_ns)) if answer.len() <= i32::MAX as usize => {
            state.clock.set_at_least(now_ns);
            let len = answer.len() as i32;
            state.answer = Some(answer);
            len
        }
        _ => -1,
    }
}
