//! Persistent Python containers under wasmtime: the base image, limits, and the execution steps.
//!
//! One [`Sandbox`] holds the engine, the compiled base image and the epoch ticker; each
//! [`Container`] is a store + instance keyed by a UUID whose Python state lives on between
//! executions. The sandbox knows nothing of HTTP, storage or what a tool does: an execution
//! either finishes or pauses with the tool calls it waits for.

pub mod abi;
mod container;
pub mod guest_memory;
pub mod image;
pub mod limits;
mod profile;
pub mod snapshot;
mod state;
mod wasi;

pub use abi::{CallResult, GuestTool, PythonError, ToolCall, ToolFailure};
pub use container::{Container, ExecuteRequest, Outcome, Pending, STOPPED_RETURN_CODE, Step, StopReason};
pub use limits::{LimitError, LimitOverrides, Limits};
pub use profile::GuestProfiler;

use state::HostState;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use uuid::Uuid;
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, InstancePre, Linker, Module, PoolingAllocationConfig, Store,
    UpdateDeadline,
};

/// How often the epoch advances: the granularity of time limits and of yielding to tokio.
pub const EPOCH_TICK: Duration = Duration::from_millis(1);
/// Wasm stack for the guest's frames; Python's recursion limit is sized to stay inside it.
pub const MAX_WASM_STACK_BYTES: usize = 4 << 20;
/// Fiber stack per running step: the wasm stack plus room for host functions.
pub const ASYNC_STACK_BYTES: usize = MAX_WASM_STACK_BYTES + (1 << 20);
/// Instantiation runs no guest code of ours, but the epoch check still applies to it.
const INSTANTIATE_BUDGET: Duration = Duration::from_secs(10);
/// Containers that may be alive in memory at once (each holds one slot of the instance pool).
pub const DEFAULT_MAX_CONTAINERS: u32 = 1024;
/// How often the ready pool is checked and topped up.
const READY_POLL: Duration = Duration::from_millis(2);
/// The pool is topped up only after this long without a request for a container: under a
/// stream of new containers, preparing more in the background only slows the foreground.
const READY_QUIET: Duration = Duration::from_millis(20);
/// Containers kept ready by default: enough for bursts of new sessions on a small machine.
pub const DEFAULT_READY_CONTAINERS: usize = 2;
/// The first execution whose written pages a ready container prefaults: what most first
/// executions touch (compiling, running, printing, the seeded random state).
const HOT_PAGES_PROBE: &str = "x = [i * 2 for i in range(10)]\nprint(x)";
/// Function table slots per instance (RustPython's table has about 20,000).
pub const MAX_TABLE_ELEMENTS: usize = 100_000;
/// A freed slot keeps up to this much of its memory resident: pages the last container
/// dirtied are copied back from the image instead of being dropped, so the next container
/// starts without page faults on the interpreter's hot pages.
pub const KEEP_RESIDENT_BYTES: usize = 16 << 20;

/// Errors of the sandbox layer. Script failures are not errors: they are [`Outcome`]s.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("building the base image failed: {0}")]
    ImageBuild(String),
    #[error("image cache {0}: {1}")]
    ImageCache(PathBuf, std::io::Error),
    #[error("wasm engine: {0}")]
    Engine(String),
    #[error("the container is already running an execution")]
    Busy,
    #[error("no room for another container: {0}")]
    Capacity(String),
    #[error("the container has no execution waiting for tool results")]
    NotWaiting,
    #[error("the container could not be restored after a failed execution: {0}")]
    RestoreFailed(String),
    #[error("the container cannot be snapshotted now: {0}")]
    NotSnapshottable(String),
    #[error("snapshot refused: {0}")]
    Snapshot(String),
}

/// Settings of a sandbox; limits of single executions come with each request.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// Where the compiled base image is cached (`~/.cache/sluice` by default).
    pub cache_dir: PathBuf,
    /// The largest limits any request may ask for.
    pub maxima: Limits,
    /// Containers that may be alive in memory at once.
    pub max_containers: u32,
    /// Seals snapshots (HMAC); a snapshot sealed with another key is refused. Keep it stable
    /// to restore snapshots after a restart, and shared between nodes.
    pub snapshot_key: Vec<u8>,
    /// Samples guest stacks at each epoch tick, for benchmarks' CPU profiles.
    pub profiler: Option<Arc<GuestProfiler>>,
    /// Containers kept instantiated and prefaulted for the next requests (each holds a slot
    /// of `max_containers` until taken); 0 turns the pool off.
    pub ready_containers: usize,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            cache_dir: default_cache_dir(),
            maxima: Limits::server_maxima(),
            max_containers: DEFAULT_MAX_CONTAINERS,
            // Good for this process only; the service passes a key it keeps.
            snapshot_key: crate::keys::ServerKey::random().snapshot_key(),
            profiler: None,
            ready_containers: DEFAULT_READY_CONTAINERS,
        }
    }
}

/// `$SLUICE_CACHE_DIR`, else `$XDG_CACHE_HOME/sluice`, else `~/.cache/sluice`; empty when
/// none is set. Never a shared temporary directory: compiled code is loaded from here.
pub fn default_cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SLUICE_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("sluice");
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => PathBuf::from(home).join(".cache").join("sluice"),
        None => PathBuf::new(),
    }
}

/// The engine, the base image and the epoch ticker, shared by every container.
#[derive(Clone)]
pub struct Sandbox {
    shared: Arc<Shared>,
    ready: Arc<ReadyPool>,
}

/// Containers instantiated and prefaulted ahead of demand: a new container then starts
/// without the page faults of its first execution. Held by the handles, not by [`Shared`]
/// (containers point to it), so that dropping the last handle frees everything.
struct ReadyPool {
    containers: std::sync::Mutex<Vec<Container>>,
    /// When the last container was asked for, in microseconds since `epoch`.
    last_demand_us: std::sync::atomic::AtomicU64,
    epoch: Instant,
}

impl Default for ReadyPool {
    fn default() -> Self {
        Self { containers: Default::default(), last_demand_us: 0.into(), epoch: Instant::now() }
    }
}

impl ReadyPool {
    fn note_demand(&self) {
        self.last_demand_us.store(self.epoch.elapsed().as_micros() as u64, Ordering::Relaxed);
    }

    /// Whether containers were asked for lately: refilling then would compete with them
    /// for the cores and the address space lock, so it waits for a quiet moment.
    fn busy(&self) -> bool {
        let last = Duration::from_micros(self.last_demand_us.load(Ordering::Relaxed));
        self.epoch.elapsed().saturating_sub(last) < READY_QUIET
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Container>> {
        self.containers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Frees the slots the ready containers hold; how many there were.
    fn drain(&self) -> usize {
        let taken = std::mem::take(&mut *self.lock());
        taken.len() // dropped here, outside the lock: each drop resets a slot
    }
}

pub(crate) struct Shared {
    engine: Engine,
    pre: InstancePre<HostState>,
    image_hash: String,
    config: SandboxConfig,
    ticker_stop: Arc<AtomicBool>,
    /// An instance of the image that never runs: checkpoints are its memory's differences.
    pristine: tokio::sync::Mutex<(Store<HostState>, abi::GuestExports)>,
    /// Pages a first execution writes, found once by a probe; ready containers prefault them.
    hot_pages: std::sync::OnceLock<Vec<u32>>,
    /// The ready pool, whose containers hold slots that any instantiation may claim back.
    /// Weak: the pool's containers point here.
    ready_slots: std::sync::Weak<ReadyPool>,
    /// Raised to stop every running script at its next epoch tick (shutdown).
    halt: Arc<AtomicBool>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.ticker_stop.store(true, Ordering::Relaxed);
    }
}

impl Sandbox {
    /// Loads (or, once per machine, builds) the base image and starts the epoch ticker.
    pub async fn new(config: SandboxConfig) -> Result<Self, SandboxError> {
        let engine = Engine::new(&engine_config(&config)).map_err(|e| SandboxError::Engine(format!("{e:#}")))?;
        let image = image::load_or_build(&engine, &config.cache_dir).await?;
        let linker = new_linker(&engine, &image.module).map_err(|e| SandboxError::Engine(format!("{e:#}")))?;
        let pre = linker.instantiate_pre(&image.module).map_err(|e| SandboxError::Engine(format!("{e:#}")))?;
        let ticker_stop = start_epoch_ticker(&engine);
        let pristine = tokio::sync::Mutex::new(instantiate(&engine, &pre, 0, limits::DEFAULT_MEMORY_BYTES).await?);
        let hot_pages = std::sync::OnceLock::new();
        let ready = Arc::<ReadyPool>::default();
        let ready_slots = Arc::downgrade(&ready);
        let shared = Arc::new(Shared {
            engine,
            pre,
            image_hash: image.hash,
            config,
            ticker_stop,
            pristine,
            hot_pages,
            ready_slots,
            halt: Arc::default(),
        });
        let sandbox = Self { shared, ready };
        if sandbox.shared.config.ready_containers > 0 {
            sandbox.find_hot_pages().await;
            sandbox.start_refilling();
        }
        Ok(sandbox)
    }

    /// Runs a small first execution in a probe container and notes the pages it wrote.
    async fn find_hot_pages(&self) {
        let Ok(mut probe) = Container::new(self.shared.clone(), Uuid::nil(), 0).await else { return };
        let request = ExecuteRequest { code: HOT_PAGES_PROBE, tools: &[], limits: Limits::default(), now_ns: Some(0) };
        if probe.execute(request).await.is_ok() {
            let _ = self.shared.hot_pages.set(probe.written_pages());
        }
    }

    /// Keeps the ready pool topped up, in quiet moments, from a background task that polls it: waking a
    /// parked worker from the request path would cost that request more (up to half a
    /// millisecond on a small VM) than the pool saves. The task holds weak references and
    /// ends with the sandbox. Outside a tokio runtime there is no pool.
    fn start_refilling(&self) {
        let target = self.shared.config.ready_containers;
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let (shared, ready) = (Arc::downgrade(&self.shared), Arc::downgrade(&self.ready));
        runtime.spawn(async move {
            let mut poll = tokio::time::interval(READY_POLL);
            poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                poll.tick().await;
                let (Some(shared), Some(ready)) = (shared.upgrade(), ready.upgrade()) else { return };
                while ready.lock().len() < target && !ready.busy() {
                    let Ok(mut container) = Container::new_spare(shared.clone()).await else { break };
                    container.prefault(shared.hot_pages.get().map_or(&[], Vec::as_slice));
                    ready.lock().push(container);
                }
            }
        });
    }

    /// Stops every script running now and every later one, at their next epoch tick: they end
    /// `interrupted`, their containers rolled back (for shutdown).
    pub fn halt_running(&self) {
        self.shared.halt.store(true, Ordering::Relaxed);
    }

    /// The content hash of the base image every container starts from.
    pub fn image_hash(&self) -> &str {
        &self.shared.image_hash
    }

    /// Containers instantiated and waiting in the ready pool right now.
    pub fn ready_now(&self) -> usize {
        self.ready.lock().len()
    }

    pub fn config(&self) -> &SandboxConfig {
        &self.shared.config
    }

    /// A fresh container with a random id and seed.
    pub async fn create_container(&self) -> Result<Container, SandboxError> {
        let mut seed = [0u8; 8];
        getrandom::fill(&mut seed).map_err(|e| SandboxError::Engine(format!("no randomness for a seed: {e}")))?;
        self.create_container_with(Uuid::new_v4(), u64::from_le_bytes(seed)).await
    }

    /// A fresh container with the given id and random seed (replay uses the recorded ones).
    pub async fn create_container_with(&self, id: Uuid, seed: u64) -> Result<Container, SandboxError> {
        self.ready.note_demand();
        let ready = self.ready.lock().pop();
        let container = match ready {
            Some(mut container) => {
                container.claim(id, seed);
                container
            }
            None => Container::new(self.shared.clone(), id, seed).await?,
        };
        Ok(container)
    }

    /// A container rebuilt from a snapshot of container `taken_of`, under `id`: the same id
    /// to restore it, a new one to fork it; with the host data sealed in the snapshot. A
    /// snapshot sealed with another key, for another image, format or container, is refused.
    pub async fn restore_container(
        &self,
        id: Uuid,
        taken_of: Uuid,
        snapshot: &[u8],
    ) -> Result<(Container, serde_json::Value), SandboxError> {
        Container::restore(self.shared.clone(), id, taken_of, snapshot).await
    }

    /// The host data sealed in a snapshot of `taken_of`, checked like a restore would check
    /// it but without restoring anything.
    pub fn snapshot_host_data(&self, taken_of: Uuid, snapshot: &[u8]) -> Result<serde_json::Value, SandboxError> {
        let config = &self.shared.config;
        let (header, _) = snapshot::open(snapshot, &config.snapshot_key, &self.shared.image_hash)
            .map_err(|e| SandboxError::Snapshot(e.to_string()))?;
        if header.container_id != taken_of.to_string() {
            return Err(SandboxError::Snapshot(format!("the snapshot was taken of another container than {taken_of}")));
        }
        Ok(header.host)
    }
}

impl Shared {
    /// A new instance of the base image, in a store of its own.
    pub(crate) async fn instantiate(
        &self,
        seed: u64,
        memory_bytes: u64,
    ) -> Result<(Store<HostState>, abi::GuestExports), SandboxError> {
        match self.instantiate_in_free_slot(seed, memory_bytes).await {
            // Ready containers hold slots too: a container that needs one (new, restored or
            // rolled back) comes first, so give them up before refusing.
            Err(SandboxError::Capacity(_)) if self.ready_slots.upgrade().is_some_and(|ready| ready.drain() > 0) => {
                self.instantiate_in_free_slot(seed, memory_bytes).await
            }
            other => other,
        }
    }

    /// A new instance in a free slot only (what the ready pool uses: it never takes a slot
    /// another ready container holds).
    pub(crate) async fn instantiate_in_free_slot(
        &self,
        seed: u64,
        memory_bytes: u64,
    ) -> Result<(Store<HostState>, abi::GuestExports), SandboxError> {
        let (mut store, exports) = instantiate(&self.engine, &self.pre, seed, memory_bytes).await?;
        store.data_mut().profiler = self.config.profiler.clone();
        store.data_mut().halt = self.halt.clone();
        Ok((store, exports))
    }

    pub(crate) fn maxima(&self) -> &Limits {
        &self.config.maxima
    }
}

async fn instantiate(
    engine: &Engine,
    pre: &InstancePre<HostState>,
    seed: u64,
    memory_bytes: u64,
) -> Result<(Store<HostState>, abi::GuestExports), SandboxError> {
    let mut store = build_store(engine, HostState::new(seed, memory_bytes, 0));
    store.data_mut().deadline = Instant::now() + INSTANTIATE_BUDGET;
    let instance = pre.instantiate_async(&mut store).await.map_err(|e| {
        match e.downcast_ref::<wasmtime::PoolConcurrencyLimitError>() {
            Some(full) => SandboxError::Capacity(full.to_string()),
            None => SandboxError::Engine(format!("instantiating the image: {e:#}")),
        }
    })?;
    let exports = abi::GuestExports::new(&instance, &mut store).map_err(|e| SandboxError::Engine(format!("{e:#}")))?;
    Ok((store, exports))
}

fn engine_config(sandbox: &SandboxConfig) -> Config {
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
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    config
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

fn start_epoch_ticker(engine: &Engine) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let (engine, flag) = (engine.clone(), stop.clone());
    std::thread::Builder::new()
        .name("sluice-epoch".into())
        .spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(EPOCH_TICK);
                engine.increment_epoch();
            }
        })
        .expect("the epoch ticker thread starts");
    stop
}
