//! Persistent Python containers under wasmtime: the base image, limits, and the execution steps.
//!
//! One [`Sandbox`] holds the engine, the compiled base image and the epoch ticker; each
//! [`Container`] is a store + instance keyed by a UUID whose Python state lives on between
//! executions. The sandbox knows nothing of HTTP, storage or what a tool does: an execution
//! either finishes or pauses with the tool calls it waits for.

pub(crate) mod abi;
mod config;
mod container;
pub(crate) mod files;
pub(crate) mod frames;
pub(crate) mod guest_memory;
pub(crate) mod image;
pub(crate) mod limits;
mod page_diff;
mod profile;
mod ready_pool;
mod runtime;
pub(crate) mod snapshot;
mod state;
mod wasi;

pub use config::SandboxConfig;
pub use container::{Container, ExecuteRequest, Outcome, Pending, Step, StopReason};
pub use files::{OutputFile, PlacedFile};
pub(crate) use files::{check_file_name, check_relative_path};
pub use frames::PythonError;
pub use limits::{LimitError, LimitOverrides, Limits};
pub use profile::GuestProfiler;

pub(crate) use config::DEFAULT_MAX_CONTAINERS;
pub(crate) use container::STOPPED_RETURN_CODE;
pub(crate) use frames::{CallResult, ToolFailure};
pub(crate) use runtime::MAX_TABLE_ELEMENTS;

use ready_pool::ReadyPool;
use runtime::{EpochTicker, build_store, engine_config, instantiate, new_linker};
use state::HostState;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use uuid::Uuid;
use wasmtime::{Engine, InstancePre, Store};

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
    /// Sealed by this deployment but made by another build (its format or its image): the
    /// container can be rebuilt from its audit trail instead.
    #[error("snapshot from another build: {0}")]
    SnapshotOutdated(String),
}

/// The engine, the base image and the epoch ticker, shared by every container.
#[derive(Clone)]
pub struct Sandbox {
    shared: Arc<Shared>,
    ready: Arc<ReadyPool>,
}

pub(crate) struct Shared {
    engine: Engine,
    pre: InstancePre<HostState>,
    image_hash: String,
    config: SandboxConfig,
    ticker: Arc<EpochTicker>,
    /// An instance of the image that never runs: checkpoints are its memory's differences.
    /// Made when first needed: `sluice run` never compacts, and its start is a cold start.
    pristine: tokio::sync::OnceCell<Pristine>,
    /// Pages a first execution writes, found once by a probe; ready containers prefault them.
    hot_pages: std::sync::OnceLock<Vec<u32>>,
    /// The ready pool, whose containers hold slots that any instantiation may claim back.
    /// Weak: the pool's containers point here.
    ready_slots: std::sync::Weak<ReadyPool>,
    /// Raised to stop every running script at its next epoch tick (shutdown).
    halt: Arc<AtomicBool>,
}

/// The pristine instance and its exports, locked while a comparison reads its memory.
pub(crate) type Pristine = tokio::sync::Mutex<(Store<HostState>, abi::GuestExports)>;

impl Drop for Shared {
    fn drop(&mut self) {
        self.ticker.stop();
    }
}

impl Sandbox {
    /// Loads (or, once per machine, builds) the base image and starts the epoch ticker.
    pub async fn new(config: SandboxConfig) -> Result<Self, SandboxError> {
        let functions = Arc::<image::CompiledFunctions>::default();
        let engine = engine_config(&config, functions.clone())
            .and_then(|engine_config| Engine::new(&engine_config))
            .map_err(|e| SandboxError::Engine(format!("{e:#}")))?;
        let image = image::load_or_build(&engine, &functions, &config.cache_dir).await?;
        let linker = new_linker(&engine, &image.module).map_err(|e| SandboxError::Engine(format!("{e:#}")))?;
        let pre = linker.instantiate_pre(&image.module).map_err(|e| SandboxError::Engine(format!("{e:#}")))?;
        let ticker = EpochTicker::start(&engine);
        let hot_pages = std::sync::OnceLock::new();
        let ready = Arc::<ReadyPool>::default();
        let ready_slots = Arc::downgrade(&ready);
        let shared = Arc::new(Shared {
            engine,
            pre,
            image_hash: image.hash,
            config,
            ticker,
            pristine: tokio::sync::OnceCell::new(),
            hot_pages,
            ready_slots,
            halt: Arc::default(),
        });
        let sandbox = Self { shared, ready };
        if sandbox.shared.config.ready_containers > 0 {
            // Recycling containers into the ready pool compares them with it.
            sandbox.shared.pristine().await?;
            sandbox.find_hot_pages().await;
            sandbox.start_refilling();
        }
        Ok(sandbox)
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

    /// Where the compiled base image is cached (its file exists once `new` has returned).
    pub fn image_file(&self) -> std::path::PathBuf {
        image::cache_path(&self.shared.config.cache_dir, &self.shared.image_hash)
    }

    /// Where the guest's wasm came from (`prebuilt`, `source` or `SLUICE_GUEST_WASM`) and its
    /// SHA-256.
    pub fn guest_origin() -> (&'static str, &'static str) {
        (sluice_python_wasm::ORIGIN, sluice_python_wasm::SHA256)
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
        let container = match self.ready.take() {
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

    /// Whether a snapshot was made by another build (its format or image): its container is
    /// to be rebuilt from the audit trail. Reads the header only (see `snapshot`).
    pub fn snapshot_is_outdated(&self, snapshot: &[u8]) -> bool {
        snapshot::made_by_another_build(snapshot, &self.shared.image_hash)
    }

    /// The host data sealed in a snapshot of `taken_of`, checked like a restore would check
    /// it but without restoring anything.
    pub fn snapshot_host_data(&self, taken_of: Uuid, snapshot: &[u8]) -> Result<serde_json::Value, SandboxError> {
        let config = &self.shared.config;
        let (header, _) =
            snapshot::open(snapshot, &config.snapshot_key, &self.shared.image_hash).map_err(|e| {
                match e.is_outdated() {
                    true => SandboxError::SnapshotOutdated(e.to_string()),
                    false => SandboxError::Snapshot(e.to_string()),
                }
            })?;
        if header.container_id != taken_of.to_string() {
            return Err(SandboxError::Snapshot(format!("the snapshot was taken of another container than {taken_of}")));
        }
        Ok(header.host)
    }
}

impl Shared {
    /// A never-run instance of the base image, in a store of its own: a ready container's
    /// when one waits (its hot pages already copied, so a restore writes its pages into memory
    /// that faults less), else a new one.
    pub(crate) async fn instantiate(
        &self,
        seed: u64,
        memory_bytes: u64,
    ) -> Result<(Store<HostState>, abi::GuestExports), SandboxError> {
        let ready = self.ready_slots.upgrade().and_then(|ready| ready.take());
        if let Some((mut store, exports)) = ready.and_then(|mut spare| {
            spare.claim(Uuid::nil(), seed);
            spare.into_fresh_instance()
        }) {
            store.data_mut().memory_guard = state::MemoryGuard::new(memory_bytes);
            return Ok((store, exports));
        }
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
        instantiate(&self.engine, &self.pre, &self.ticker, self.host_state(seed, memory_bytes)).await
    }

    /// The pristine instance, instantiated on first use.
    pub(crate) async fn pristine(&self) -> Result<&Pristine, SandboxError> {
        self.pristine
            .get_or_try_init(|| async {
                let state = HostState::new(0, limits::DEFAULT_MEMORY_BYTES, 0);
                instantiate(&self.engine, &self.pre, &self.ticker, state).await.map(tokio::sync::Mutex::new)
            })
            .await
    }

    /// The host state of a new container in this sandbox (a new instance's, or a recycled
    /// one's): its seed and memory limit, and this sandbox's profiler and halt switch.
    pub(crate) fn host_state(&self, seed: u64, memory_bytes: u64) -> HostState {
        HostState {
            profiler: self.config.profiler.clone(),
            halt: self.halt.clone(),
            ..HostState::new(seed, memory_bytes, 0)
        }
    }

    pub(crate) fn maxima(&self) -> &Limits {
        &self.config.maxima
    }
}
