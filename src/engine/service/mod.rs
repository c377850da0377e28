//! The service's engine: containers and executions by id, client-tool pauses and their
//! timers, expiry. The HTTP layer is a thin shell over [`Service`].
//!
//! A container's slot (a tokio mutex) is held while its execution runs; an execution waiting
//! for client tool results keeps its [`Run`] in the slot without holding the lock. Readers
//! of an execution see a [`ExecutionView`] that is replaced after every step, so they never
//! wait for a running script.
//!
//! The maps and views are std mutexes, never held across an await. Where two are held at
//! once, an index (containers, executions) is taken before a view, never after: a view's
//! lock is let go before its execution moves between indexes.

mod config;
mod containers;
mod error;
mod executions;
mod files;
mod fork;
mod history;
mod leases;
mod persistence;
mod preview;
mod quotas;
mod recovery;
mod restore;
mod shutdown;
mod timers;
mod tools;
mod views;

pub use config::ServiceConfig;
pub(crate) use files::MAX_FILE_BYTES;

/// A time from Unix milliseconds, as the store keeps them.
pub(crate) fn at_ms(ms: i64) -> SystemTime {
    at(ms)
}
pub use error::ServiceError;
pub use history::{ContainerVerdict, ExecutionPage};
pub use preview::{Preview, PreviewTool};
pub use quotas::Quotas;
pub use views::{ApprovalRequest, ContainerView, ExecutionStatus, ExecutionView, NewExecution};

pub(crate) use config::{DEFAULT_HANDOFF_IDLE, DEFAULT_LEASE_TTL, DEFAULT_MAX_LIVE_CONTAINERS, DEFAULT_SNAPSHOT_IDLE};
pub(crate) use views::{ContainerState, ExecutionError};

use persistence::{SealedState, at, ms};
use quotas::{ReplayGate, RequestGate};
use views::{view_bytes, view_from_history, waiting_on};

use super::metrics::{Gauges, Metrics};
use super::{
    ApprovalAnswer, CallStatus, Dispatch, Dispatcher, EngineError, LedgerEntry, Moved, Run, RunContext, RunState,
    Usage, WaitingRun,
};
use crate::audit::{
    ContainerHistory, Discard, Event, ExecutionFilter, ExecutionHistory, ExecutionRow, Record, Recorder, Store,
    StoredContainer,
};
use crate::call::{ToolCall, ToolFailure};
use crate::engine::replay::{ReplayReport, replay};
use crate::sandbox::{Container, LimitOverrides, Limits, Outcome, Sandbox, SandboxError};
use crate::tools::http::{CallContext, HttpExecutor};
use crate::tools::mcp::McpServers;
use crate::tools::registry::ToolRegistry;
use crate::tools::{Admission, Executor, Tool, ToolDefinition, Toolset};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use uuid::Uuid;

/// How often expired containers are looked for.
pub(crate) const REAP_INTERVAL: Duration = Duration::from_secs(1);
/// Finished executions kept in memory for `GET` (the oldest go first).
pub(crate) const MAX_RETAINED_EXECUTIONS: usize = 10_000;
/// Ids of removed containers remembered, to answer 410 rather than 404.
pub(crate) const MAX_REMEMBERED_GONE: usize = 10_000;
pub(crate) const MAX_CODE_BYTES: usize = 1 << 20;
/// Bytes of finished executions' views kept in memory for quick reads (outputs, ledgers);
/// past it the oldest are read from the audit store instead.
pub(crate) const MAX_RETAINED_EXECUTION_BYTES: usize = 256 << 20;
/// The longest a shutdown spends saving containers (one snapshot takes milliseconds).
pub(crate) const SHUTDOWN_SAVE_BUDGET: Duration = Duration::from_secs(4);
/// The longest making room waits for a container that housekeeping is saving.
pub(crate) const MAX_WAIT_FOR_HOUSEKEEPING: Duration = Duration::from_secs(2);
/// Executions waiting to have their tokens counted; past this, only estimates are recorded.
pub(crate) const MAX_QUEUED_TOKEN_COUNTS: usize = 256;
pub(crate) const MAX_TOOLS_PER_EXECUTION: usize = 256;

/// Who a request acts for: the id of its API key ("anonymous" when keys are off).
pub(crate) type Owner = String;

struct ContainerEntry {
    id: Uuid,
    owner: Owner,
    created_at: SystemTime,
    /// Executions started in this container (numbers them).
    started: std::sync::atomic::AtomicU64,
    /// Until when this node's lease on the container holds (as far as it knows).
    lease_until: Mutex<Instant>,
    /// Changed since it was last saved.
    dirty: AtomicBool,
    last_used: Mutex<SystemTime>,
    /// Set once this node no longer runs the container (unloaded, deleted, expired, its lease
    /// lost): whoever still holds the entry must not use it. Checked under the slot lock.
    retired: AtomicBool,
    /// Set while housekeeping (a save, an unload) holds the slot: a request that finds the
    /// slot taken waits for that, where a running script would make it busy.
    saving: AtomicBool,
    /// Shared so that a request can hold the slot while it looks the entry up again.
    slot: Arc<tokio::sync::Mutex<Slot>>,
}

impl ContainerEntry {
    fn is_retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }

    /// The slot for housekeeping (saving, unloading, expiring), if no one holds it; marked
    /// meanwhile so that a request arriving waits for it instead of answering busy.
    fn try_lock_for_housekeeping(&self) -> Option<Housekeeping<'_>> {
        self.slot.try_lock().ok().map(|slot| self.marked_for_housekeeping(slot))
    }

    /// As [`Self::try_lock_for_housekeeping`], but a slot that other housekeeping holds (a
    /// save: milliseconds) is waited for, up to [`MAX_WAIT_FOR_HOUSEKEEPING`]: the container is
    /// idle, and making room must not refuse a request because a background save overlapped it.
    async fn lock_for_housekeeping(&self) -> Option<Housekeeping<'_>> {
        if let Some(housekeeping) = self.try_lock_for_housekeeping() {
            return Some(housekeeping);
        }
        if !self.saving.load(Ordering::Acquire) {
            return None; // a request holds it: the container is busy
        }
        let slot = tokio::time::timeout(MAX_WAIT_FOR_HOUSEKEEPING, self.slot.lock()).await.ok()?;
        Some(self.marked_for_housekeeping(slot))
    }

    fn marked_for_housekeeping<'a>(&'a self, slot: tokio::sync::MutexGuard<'a, Slot>) -> Housekeeping<'a> {
        self.saving.store(true, Ordering::Release);
        Housekeeping { slot: Some(slot), saving: &self.saving }
    }
}

/// A slot held by housekeeping; the mark goes with it, after the slot (a request that finds
/// the slot taken then always sees the mark).
struct Housekeeping<'a> {
    slot: Option<tokio::sync::MutexGuard<'a, Slot>>,
    saving: &'a AtomicBool,
}

impl std::ops::Deref for Housekeeping<'_> {
    type Target = Slot;
    fn deref(&self) -> &Slot {
        self.slot.as_ref().expect("held until dropped")
    }
}

impl std::ops::DerefMut for Housekeeping<'_> {
    fn deref_mut(&mut self) -> &mut Slot {
        self.slot.as_mut().expect("held until dropped")
    }
}

impl Drop for Housekeeping<'_> {
    fn drop(&mut self) {
        drop(self.slot.take());
        self.saving.store(false, Ordering::Release);
    }
}

/// How often a request looks a container up again when it was unloaded between the lookup and
/// taking its slot, before it answers [`moved`].
const MAX_LOOKUPS: usize = 3;

/// What a request that keeps meeting a retired entry answers: the container moved; asking
/// again finds it where it is now.
fn moved(id: Uuid) -> ServiceError {
    ServiceError::Conflict(format!("container {id} was unloaded while the request waited; try again"))
}

struct Slot {
    container: Container,
    /// The execution waiting for client tool results, if any.
    waiting: Option<WaitingRun>,
}

struct ExecutionEntry {
    owner: Owner,
    view: Mutex<ExecutionView>,
}

/// Why a container was removed (an id in neither map is unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gone {
    Expired,
    Deleted,
}

struct Inner {
    sandbox: Sandbox,
    config: ServiceConfig,
    registry: ToolRegistry,
    metrics: Metrics,
    recorder: Arc<dyn Recorder>,
    store: Option<Arc<Store>>,
    containers: Mutex<HashMap<Uuid, Arc<ContainerEntry>>>,
    gone: Mutex<Bounded<Uuid, Gone>>,
    /// Executions running or waiting for tool results: never forgotten while they are, so a
    /// waiting execution stays answerable whatever other keys do (each key's waiting ones are
    /// capped by its quota).
    live_executions: Mutex<HashMap<String, Arc<ExecutionEntry>>>,
    /// Finished executions, the most recent kept for quick reads (older ones are read from
    /// the audit store).
    finished_executions: Mutex<Bounded<String, Arc<ExecutionEntry>>>,
    replays: Arc<ReplayGate>,
    requests: RequestGate,
    /// Token counts waiting (bounded) and the one being counted.
    token_queue: Arc<tokio::sync::Semaphore>,
    token_turn: Arc<tokio::sync::Semaphore>,
    shutting_down: AtomicBool,
    /// One restore at a time per container (others wait for it rather than load twice).
    restoring: Mutex<HashMap<Uuid, Arc<tokio::sync::Mutex<()>>>>,
    /// Files, when there is no store to keep them.
    memory_files: Mutex<files::MemoryFiles>,
}

/// A map that forgets its oldest entries beyond a number of entries or a total weight.
struct Bounded<K, V> {
    by_key: HashMap<K, (V, usize)>,
    order: VecDeque<K>,
    capacity: usize,
    max_weight: usize,
    weight: usize,
}

impl<K: std::hash::Hash + Eq + Clone, V> Bounded<K, V> {
    fn new(capacity: usize, max_weight: usize) -> Self {
        Self { by_key: HashMap::new(), order: VecDeque::new(), capacity, max_weight, weight: 0 }
    }

    fn insert(&mut self, key: K, value: V, weight: usize) {
        match self.by_key.insert(key.clone(), (value, weight)) {
            Some((_, old)) => self.weight -= old,
            None => self.order.push_back(key),
        }
        self.weight += weight;
        while self.order.len() > self.capacity || (self.weight > self.max_weight && self.order.len() > 1) {
            if let Some((_, old)) = self.order.pop_front().and_then(|old| self.by_key.remove(&old)) {
                self.weight -= old;
            }
        }
    }

    fn get(&self, key: &K) -> Option<&V> {
        self.by_key.get(key).map(|(value, _)| value)
    }
}

/// The service core; cheap to clone (shared).
#[derive(Clone)]
pub struct Service {
    inner: Arc<Inner>,
}

/// Answers admitted calls for the service: `http` and `mcp` tools now, `client` tools by
/// the caller.
struct ServiceDispatcher<'a> {
    http: &'a HttpExecutor,
    mcp: &'a McpServers,
    approvals: &'a crate::tools::approval::ApprovalPolicy,
}

impl<'a> ServiceDispatcher<'a> {
    fn new(config: &'a ServiceConfig) -> Self {
        Self { http: &config.http, mcp: &config.mcp, approvals: &config.approvals }
    }
}

impl Dispatcher for ServiceDispatcher<'_> {
    async fn dispatch(&self, admission: &Admission, call: &ToolCall, context: &CallContext) -> Dispatch {
        let definition = &admission.tool.definition;
        match &definition.executor {
            Executor::Client => Dispatch::Client,
            Executor::Http { url } => {
                let outcome = self.http.call(definition, url, &call.input, context).await;
                Dispatch::Ready { result: outcome.result, attempts: outcome.attempts }
            }
            Executor::Mcp { server, tool } => {
                let result = self.mcp.call(server, tool, &call.input, &context.owner, definition.timeout()).await;
                Dispatch::Ready { result, attempts: 1 }
            }
        }
    }

    fn approvals(&self) -> Option<&crate::tools::approval::ApprovalPolicy> {
        Some(self.approvals)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Service {
    /// A service that keeps no audit trail (tests, throwaway runs).
    pub fn new(sandbox: Sandbox, config: ServiceConfig) -> Self {
        Self::build(sandbox, config, Arc::new(Discard), None)
    }

    /// A service that records everything in `store` before it reports it.
    pub fn with_store(sandbox: Sandbox, config: ServiceConfig, store: Arc<Store>) -> Self {
        Self::build(sandbox, config, store.clone(), Some(store))
    }

    /// A service whose events go to `recorder` (benchmarks compare recorders this way).
    pub fn with_recorder(sandbox: Sandbox, config: ServiceConfig, recorder: Arc<dyn Recorder>) -> Self {
        Self::build(sandbox, config, recorder, None)
    }

    pub(super) fn build(
        sandbox: Sandbox,
        config: ServiceConfig,
        recorder: Arc<dyn Recorder>,
        store: Option<Arc<Store>>,
    ) -> Self {
        // Containers beyond the sandbox's slots could never be made: the service makes room
        // (saving idle containers) before it runs out of slots, rather than refusing at them.
        let slots = usize::try_from(sandbox.config().max_containers).unwrap_or(usize::MAX);
        let config = ServiceConfig { max_live_containers: config.max_live_containers.min(slots).max(1), ..config };
        let service = Self {
            inner: Arc::new(Inner {
                registry: ToolRegistry::new(config.quotas.tools),
                sandbox,
                config,
                metrics: Metrics::default(),
                recorder,
                store,
                containers: Mutex::default(),
                gone: Mutex::new(Bounded::new(MAX_REMEMBERED_GONE, usize::MAX)),
                live_executions: Mutex::default(),
                finished_executions: Mutex::new(Bounded::new(MAX_RETAINED_EXECUTIONS, MAX_RETAINED_EXECUTION_BYTES)),
                replays: Arc::default(),
                requests: RequestGate::default(),
                token_queue: Arc::new(tokio::sync::Semaphore::new(MAX_QUEUED_TOKEN_COUNTS)),
                token_turn: Arc::new(tokio::sync::Semaphore::new(1)),
                shutting_down: AtomicBool::new(false),
                restoring: Mutex::new(HashMap::new()),
                memory_files: Mutex::default(),
            }),
        };
        service.spawn_reaper();
        service
    }

    /// A place among `owner`'s requests in flight, held while the request runs (the API
    /// takes one for every request of a key).
    pub fn request_place(&self, owner: &Owner) -> Result<tokio::sync::OwnedSemaphorePermit, ServiceError> {
        self.inner.requests.admit(owner, &self.inner.config.quotas)
    }

    /// The content hash of the base image every container runs (what `/healthz` reports).
    pub fn image_hash(&self) -> &str {
        self.inner.sandbox.image_hash()
    }

    pub fn config(&self) -> &ServiceConfig {
        &self.inner.config
    }

    pub fn metrics_text(&self) -> String {
        let containers = lock(&self.inner.containers).len() as u64;
        let executions_waiting = lock(&self.inner.live_executions)
            .values()
            .filter(|e| lock(&e.view).status == ExecutionStatus::RequiresAction)
            .count() as u64;
        self.inner.metrics.render(Gauges { containers, executions_waiting })
    }

    /// Runs `work` as a task of its own, so that a caller that goes away (an HTTP client
    /// disconnecting) cannot cut an execution, a restore or a save off half-way: the work ends
    /// as it would have, on record, and only its answer is lost.
    pub(super) async fn detached<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, ServiceError>> + Send + 'static,
    ) -> Result<T, ServiceError> {
        tokio::spawn(work).await.unwrap_or_else(|e| Err(ServiceError::Internal(format!("the work failed: {e}"))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execution_status_serializes_as_the_contract_says() {
        assert_eq!(serde_json::to_value(ExecutionStatus::RequiresAction).unwrap(), "requires_action");
        assert_eq!(serde_json::to_value(ExecutionStatus::Completed).unwrap(), "completed");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn making_room_waits_for_a_save_but_not_for_a_running_script() {
        let sandbox = Sandbox::new(crate::sandbox::SandboxConfig::default()).await.expect("a sandbox");
        let container = sandbox.create_container().await.expect("a container");
        let entry = ContainerEntry {
            id: container.id(),
            owner: "k".into(),
            created_at: SystemTime::now(),
            started: 0.into(),
            lease_until: Mutex::new(Instant::now()),
            dirty: false.into(),
            last_used: Mutex::new(SystemTime::now()),
            retired: AtomicBool::new(false),
            saving: AtomicBool::new(false),
            slot: Arc::new(tokio::sync::Mutex::new(Slot { container, waiting: None })),
        };
        // A background save holds the slot: making room waits for it rather than refusing.
        let save = entry.try_lock_for_housekeeping().expect("a free slot");
        let (taken, ()) = tokio::join!(entry.lock_for_housekeeping(), async {
            tokio::time::sleep(Duration::from_millis(30)).await;
            drop(save);
        });
        assert!(taken.is_some(), "the slot comes free once the save ends");
        drop(taken);
        assert!(!entry.saving.load(Ordering::Acquire), "the mark goes with the slot");
        // A request holds it (a script runs): busy, at once.
        let request = entry.slot.try_lock().expect("a free slot");
        let started = Instant::now();
        assert!(entry.lock_for_housekeeping().await.is_none());
        assert!(started.elapsed() < MAX_WAIT_FOR_HOUSEKEEPING / 2, "not waited for");
        drop(request);
        assert!(entry.lock_for_housekeeping().await.is_some());
    }

    #[test]
    fn unix_ms_counts_from_the_epoch() {
        assert_eq!(crate::audit::unix_ms(SystemTime::UNIX_EPOCH + Duration::from_millis(1234)), 1234);
    }
}
