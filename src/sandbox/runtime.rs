//! The wasmtime side of the sandbox: the engine's configuration (pooling allocator,
//! copy-on-write memory, epoch interruption), the store every guest runs in, the linker, and
//! the epoch ticker.

use super::image::CompiledFunctions;
use super::state::HostState;
use super::{SandboxConfig, SandboxError, abi, limits, wasi};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, InstancePre, Linker, Module, PoolingAllocationConfig, Store,
    UpdateDeadline,
};

/// How often the epoch advances: the granularity of time limits and of yielding to tokio.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(1);
/// Wasm stack for the guest's frames; Python's recursion limit is sized to stay inside it.
pub(crate) const MAX_WASM_STACK_BYTES: usize = 4 << 20;
/// Fiber stack per running step: the wasm stack plus room for host functions.
pub(crate) const ASYNC_STACK_BYTES: usize = MAX_WASM_STACK_BYTES + (1 << 20);
/// Instantiation runs no guest code of ours, but the epoch check still applies to it.
const INSTANTIATE_BUDGET: Duration = Duration::from_secs(10);
/// Function table slots per instance (RustPython's table has about 20,000).
pub(crate) const MAX_TABLE_ELEMENTS: usize = 100_000;
/// A freed slot keeps up to this much of its memory resident: pages the last container
/// dirtied are copied back from the image instead of being dropped, so the next container
/// starts without page faults on the interpreter's hot pages.
pub(crate) const KEEP_RESIDENT_BYTES: usize = 16 << 20;

pub(super) async fn instantiate(
    engine: &Engine,
    pre: &InstancePre<HostState>,
    ticker: &Arc<EpochTicker>,
    state: HostState,
) -> Result<(Store<HostState>, abi::GuestExports), SandboxError> {
    let mut store = build_store(engine, state);
    store.data_mut().deadline = Instant::now() + INSTANTIATE_BUDGET;
    let instance = pre.instantiate_async(&mut store).await.map_err(|e| {
        match e.downcast_ref::<wasmtime::PoolConcurrencyLimitError>() {
            Some(full) => SandboxError::Capacity(full.to_string()),
            None => SandboxError::Engine(format!("instantiating the image: {e:#}")),
        }
    })?;
    let exports = abi::GuestExports::new(&instance, &mut store, ticker.clone())
        .map_err(|e| SandboxError::Engine(format!("{e:#}")))?;
    Ok((store, exports))
}

/// The engine's configuration; `functions` keeps Cranelift's output while the image is built.
pub(super) fn engine_config(sandbox: &SandboxConfig, functions: Arc<CompiledFunctions>) -> wasmtime::Result<Config> {
    // Slots are reused: a new container gets a slot whose hot pages are already resident,
    // reset to the image by copying back only the pages the last tenant dirtied.
    let mut pool = PoolingAllocationConfig::new();
    // The pre-initialization store and the pristine instance take slots too.
    let slots = sandbox.max_containers.saturating_add(2);
    pool.total_memories(slots)
        .total_tables(slots)
        .total_core_instances(slots)
        .total_stacks(slots)
        .max_memory_size(sandbox.maxima.memory_bytes.max(limits::MAX_MEMORY_BYTES) as usize)
        .table_elements(MAX_TABLE_ELEMENTS)
        .linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
        .table_keep_resident(MAX_TABLE_ELEMENTS * std::mem::size_of::<usize>())
        .async_stack_keep_resident(ASYNC_STACK_BYTES)
        .pagemap_scan(Enabled::Auto);
    let mut config = Config::new();
    config
        .epoch_interruption(true)
        .memory_init_cow(true)
        .max_wasm_stack(MAX_WASM_STACK_BYTES)
        .async_stack_size(ASYNC_STACK_BYTES)
        .parallel_compilation(true)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool))
        .enable_incremental_compilation(functions)?;
    if sandbox.perf_map {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    Ok(config)
}

/// The store every guest runs in: memory guard, and a deadline checked at each epoch tick.
pub(crate) fn build_store(engine: &Engine, state: HostState) -> Store<HostState> {
    let mut store = Store::new(engine, state);
    store.limiter(|state| &mut state.memory_guard);
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|mut ctx| {
        if let Some(profiler) = ctx.data().profiler.clone() {
            profiler.sample(&ctx);
        }
        let state = ctx.data_mut();
        if Instant::now() >= state.deadline {
            state.timed_out = true;
            return Ok(UpdateDeadline::Interrupt);
        }
        if state.interruptible && state.halt.load(Ordering::Relaxed) {
            state.halted = true;
            return Ok(UpdateDeadline::Interrupt);
        }
        // Let other containers' work run on this thread between ticks.
        Ok(UpdateDeadline::Yield(1))
    });
    store
}

/// The imports a guest module needs: our WASI subset and the `sluice_v1` ABI.
pub(crate) fn new_linker(engine: &Engine, module: &Module) -> wasmtime::Result<Linker<HostState>> {
    let mut linker = Linker::new(engine);
    wasi::add_to_linker(&mut linker, module)?;
    abi::add_to_linker(&mut linker)?;
    Ok(linker)
}

/// Advances the engine's epoch every [`EPOCH_TICK`] while a guest runs, and sleeps while none
/// does. Ticks are what interrupt a guest (its time limit, a halt, a yield to other
/// containers' work), so every call into a guest holds a [`GuestRunning`] for its duration
/// (`abi::GuestExports` takes one around each call; nothing else calls into a guest once the
/// image is built). An idle service then wakes no thread a thousand times a second.
pub(crate) struct EpochTicker {
    engine: Engine,
    running: AtomicUsize,
    stop: AtomicBool,
    thread: std::sync::OnceLock<std::thread::Thread>,
}

impl EpochTicker {
    pub(super) fn start(engine: &Engine) -> Arc<Self> {
        let ticker = Arc::new(Self {
            engine: engine.clone(),
            running: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            thread: std::sync::OnceLock::new(),
        });
        let ticking = ticker.clone();
        let thread = std::thread::Builder::new()
            .name("sluice-epoch".into())
            .spawn(move || ticking.tick_while_running())
            .expect("the epoch ticker thread starts");
        ticker.thread.set(thread.thread().clone()).expect("set once, here");
        ticker
    }

    fn tick_while_running(&self) {
        while !self.stop.load(Ordering::Acquire) {
            if self.running.load(Ordering::Acquire) == 0 {
                // An `unpark` between the load and here makes this return at once.
                std::thread::park();
                continue;
            }
            std::thread::sleep(EPOCH_TICK);
            self.engine.increment_epoch();
        }
    }

    /// Held while a call into a guest is in progress: the ticker ticks until the last drops.
    pub(crate) fn guest_running(&self) -> GuestRunning<'_> {
        if self.running.fetch_add(1, Ordering::AcqRel) == 0 {
            self.wake();
        }
        GuestRunning(self)
    }

    /// Ends the thread (when the sandbox is dropped).
    pub(super) fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        self.wake();
    }

    fn wake(&self) {
        if let Some(thread) = self.thread.get() {
            thread.unpark();
        }
    }
}

/// A call into a guest in progress (see [`EpochTicker`]); a borrow, so taking one on every
/// step costs two atomic operations and no reference count.
pub(crate) struct GuestRunning<'a>(&'a EpochTicker);

impl Drop for GuestRunning<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::AcqRel);
    }
}
