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

use super::metrics::{Gauges, Metrics};
use super::replay::{ReplayReport, replay};
use super::{CallStatus, Dispatch, Dispatcher, EngineError, LedgerEntry, Progress, Run, RunContext, Usage};
use crate::audit::{ContainerHistory, Discard, Event, ExecutionFilter, ExecutionRow, Record, Recorder, Store};
use crate::sandbox::{Container, LimitOverrides, Limits, Outcome, Sandbox, SandboxError, ToolCall, ToolFailure};
use crate::tools::http::{CallContext, HttpExecutor};
use crate::tools::registry::ToolRegistry;
use crate::tools::{Admission, Executor, Tool, ToolDefinition, Toolset};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use uuid::Uuid;

mod durable;
mod quotas;

pub use quotas::Quotas;
use quotas::{ReplayGate, RequestGate};

/// Anthropic's containers expire after five idle minutes.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(4 * 3600);
/// How often expired containers are looked for.
pub const REAP_INTERVAL: Duration = Duration::from_secs(1);
/// Finished executions kept in memory for `GET` (the oldest go first).
pub const MAX_RETAINED_EXECUTIONS: usize = 10_000;
/// Ids of removed containers remembered, to answer 410 rather than 404.
pub const MAX_REMEMBERED_GONE: usize = 10_000;
pub const MAX_CODE_BYTES: usize = 1 << 20;
/// Bytes of finished executions' views kept in memory for quick reads (outputs, ledgers);
/// past it the oldest are read from the audit store instead.
pub const MAX_RETAINED_EXECUTION_BYTES: usize = 256 << 20;
/// The longest a shutdown spends saving containers (one snapshot takes milliseconds).
pub const SHUTDOWN_SAVE_BUDGET: Duration = Duration::from_secs(4);
/// Executions waiting to have their tokens counted; past this, only estimates are recorded.
pub const MAX_QUEUED_TOKEN_COUNTS: usize = 256;
pub const MAX_TOOLS_PER_EXECUTION: usize = 256;
/// Containers kept in memory before the least recently used idle one is unloaded.
pub const DEFAULT_MAX_LIVE_CONTAINERS: usize = 256;
/// A container that changed and has been idle this long is saved to the store.
pub const DEFAULT_SNAPSHOT_IDLE: Duration = Duration::from_secs(5);
/// With several nodes: how long a lease lasts without renewal.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(10);
/// A request for a container another node holds waits this many lease lifetimes (in
/// halves) before giving up: long enough to outlast a dead node's lease, plus a margin.
const LEASE_WAIT_HALF_TTLS: u32 = 3;
/// With several nodes: a container idle this long is saved and handed back.
pub const DEFAULT_HANDOFF_IDLE: Duration = Duration::from_millis(500);

#[derive(Debug, Clone)]
pub struct ServiceConfig {
    pub idle_timeout: Duration,
    pub max_age: Duration,
    /// Limits of an execution that asks for none.
    pub defaults: Limits,
    /// The largest limits a request may ask for.
    pub maxima: Limits,
    pub max_live_containers: usize,
    pub snapshot_idle: Duration,
    /// Save after every execution, not only when idle: a node killed at any moment loses no
    /// finished execution's state (about 2 ms per execution). On by default with several nodes.
    pub snapshot_every_execution: bool,
    /// Set when several nodes share the store: idle containers are handed back this soon.
    pub handoff_idle: Option<Duration>,
    pub lease_ttl: Duration,
    /// This node's name in leases.
    pub node: String,
    /// What one API key may hold at once.
    pub quotas: Quotas,
    /// Carries out `http` tools, to the destinations the operator allows (none by default).
    pub http: HttpExecutor,
}

impl ServiceConfig {
    /// How long a request waits for another node to hand a container over.
    pub fn lease_wait(&self) -> Duration {
        self.lease_ttl * LEASE_WAIT_HALF_TTLS / 2
    }
}

impl Default for ServiceConfig {
    fn default() -> Self {
        Self {
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_age: DEFAULT_MAX_AGE,
            defaults: Limits::default(),
            maxima: Limits::server_maxima(),
            max_live_containers: DEFAULT_MAX_LIVE_CONTAINERS,
            snapshot_idle: DEFAULT_SNAPSHOT_IDLE,
            snapshot_every_execution: false,
            handoff_idle: None,
            lease_ttl: DEFAULT_LEASE_TTL,
            node: format!("node-{}", Uuid::new_v4().simple()),
            quotas: Quotas::default(),
            http: HttpExecutor::default(),
        }
    }
}

/// Who a request acts for: the id of its API key ("anonymous" when keys are off).
pub type Owner = String;

/// Errors of the service layer, each with a stable type the API maps to a status.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0} not found")]
    NotFound(String),
    #[error("container {0} has expired")]
    Expired(String),
    #[error("{0}")]
    Conflict(String),
    /// The container's saved state was refused (tampered, or for another image or format).
    #[error("container {0} cannot be restored: {1}")]
    Unrestorable(String, String),
    #[error("the service is at capacity: {0}")]
    Capacity(String),
    /// A per-key quota is used up (see [`Quotas`]); it frees as the key's work ends.
    #[error("{0}")]
    Quota(String),
    #[error("the service is shutting down")]
    ShuttingDown,
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<crate::audit::StoreError> for ServiceError {
    fn from(error: crate::audit::StoreError) -> Self {
        ServiceError::Internal(format!("audit store: {error}"))
    }
}

impl From<EngineError> for ServiceError {
    fn from(error: EngineError) -> Self {
        match error {
            EngineError::Sandbox(SandboxError::Capacity(why)) => ServiceError::Capacity(why),
            EngineError::Sandbox(SandboxError::Busy) => ServiceError::Conflict("the container is busy".into()),
            other => ServiceError::Internal(other.to_string()),
        }
    }
}

impl From<SandboxError> for ServiceError {
    fn from(error: SandboxError) -> Self {
        EngineError::from(error).into()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionStatus {
    Running,
    RequiresAction,
    Completed,
    Failed,
}

/// A call handed to the API caller, as a `tool_use` block shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ToolUse {
    pub id: String,
    pub name: String,
    pub input: Arc<serde_json::Map<String, serde_json::Value>>,
}

impl From<&super::ClientCall> for ToolUse {
    fn from(call: &super::ClientCall) -> Self {
        Self { id: call.id.clone(), name: call.name.clone(), input: call.input.clone() }
    }
}

/// A call of an execution saved while waiting, as it was handed out.
impl From<&super::ClientCallState> for ToolUse {
    fn from(call: &super::ClientCallState) -> Self {
        Self { id: call.id.clone(), name: call.name.clone(), input: call.input.clone() }
    }
}

/// Why an execution failed, beyond the script's own exceptions.
#[derive(Debug, Clone, Serialize)]
pub struct ExecutionError {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
}

/// What readers of an execution see; replaced after every step.
#[derive(Debug, Clone)]
pub struct ExecutionView {
    pub id: String,
    pub container_id: Uuid,
    pub container_expires_at: SystemTime,
    pub code: String,
    pub status: ExecutionStatus,
    pub tool_uses: Vec<ToolUse>,
    pub outcome: Option<Outcome>,
    pub error: Option<ExecutionError>,
    pub usage: Usage,
    pub ledger: Vec<LedgerEntry>,
    pub created_at: SystemTime,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ContainerState {
    Idle,
    Running,
    WaitingForTools,
}

#[derive(Debug, Clone)]
pub struct ContainerView {
    pub id: Uuid,
    pub created_at: SystemTime,
    pub expires_at: SystemTime,
    pub state: ContainerState,
    pub executions: u64,
}

/// What a new execution asks for.
#[derive(Debug, Clone, Default)]
pub struct NewExecution {
    pub code: String,
    pub container: Option<Uuid>,
    pub tools: Vec<ToolDefinition>,
    pub tool_names: Vec<String>,
    pub limits: LimitOverrides,
}

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
    slot: tokio::sync::Mutex<Slot>,
}

impl ContainerEntry {
    fn is_retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }
}

/// What a request that meets a retired entry answers: the container moved; asking again finds
/// it where it is now.
fn moved(id: Uuid) -> ServiceError {
    ServiceError::Conflict(format!("container {id} was unloaded while the request waited; try again"))
}

struct Slot {
    container: Container,
    /// The execution waiting for client tool results, if any.
    waiting: Option<Run>,
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

/// About what a view holds in memory: its texts, and the ledger's arguments and results.
fn view_bytes(view: &ExecutionView) -> usize {
    let outcome = view
        .outcome
        .as_ref()
        .map_or(0, |o| o.stdout.len() + o.stderr.len() + o.value_repr.as_ref().map_or(0, String::len));
    let ledger: usize = view
        .ledger
        .iter()
        .map(|c| c.result.as_ref().map_or(0, |r| r.len()) + serde_json::to_string(&*c.input).map_or(0, |t| t.len()))
        .sum();
    view.code.len() + outcome + ledger
}

/// The service core; cheap to clone (shared).
#[derive(Clone)]
pub struct Service {
    inner: Arc<Inner>,
}

/// Answers admitted calls for the service: `http` tools now, `client` tools by the caller.
struct ServiceDispatcher<'a> {
    http: &'a HttpExecutor,
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
        }
    }
}

fn status_name(status: CallStatus) -> &'static str {
    match status {
        CallStatus::Requested => "requested",
        CallStatus::Refused => "refused",
        CallStatus::Dispatched => "dispatched",
        CallStatus::Succeeded => "succeeded",
        CallStatus::Failed => "failed",
        CallStatus::TimedOut => "timed_out",
        CallStatus::Cancelled => "cancelled",
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

    /// Marks executions that were running when the process holding them stopped as
    /// interrupted, with their calls in flight; nothing is run again. An execution that was
    /// saved waiting for client tool results is not cut off: it resumes when answered.
    /// Returns how many were marked.
    ///
    /// With `shared_as` (this node's name, when several nodes share the store) only
    /// containers whose lease has lapsed are touched: another live node may be running the
    /// rest. A single node owns every lease, so stale ones from its last life are cleared.
    pub async fn recover_interrupted(
        store: &Store,
        shared_as: Option<&str>,
        lease_ttl: Duration,
    ) -> Result<usize, ServiceError> {
        if shared_as.is_none() {
            store.clear_leases().await?;
        }
        let mut marked = 0;
        for (container_id, execution_id) in store.unfinished_executions().await? {
            if let Some(node) = shared_as {
                let until = crate::audit::unix_ms(SystemTime::now() + lease_ttl) as i64;
                if !store.acquire_lease(&container_id, node, until).await? {
                    continue;
                }
            }
            let stored = store.load_container(&container_id).await?;
            let waiting = stored.is_some_and(|s| s.waiting_execution.as_deref() == Some(execution_id.as_str()));
            if !waiting {
                // One unreadable history must not keep the service from starting: it is
                // logged and marked, and the rest are recovered.
                match Service::recover_execution(store, &container_id, &execution_id).await {
                    Ok(()) => marked += 1,
                    Err(e) => tracing::error!(
                        container = %container_id, execution = %execution_id, error = %e,
                        "could not mark an interrupted execution"
                    ),
                }
            }
            if let Some(node) = shared_as {
                store.release_lease(&container_id, node).await?;
            }
        }
        Ok(marked)
    }

    /// Records one execution as interrupted, with its calls in flight cancelled. Records of
    /// it that cannot be read are logged and it is marked all the same, without its calls.
    async fn recover_execution(store: &Store, container_id: &str, execution_id: &str) -> Result<(), ServiceError> {
        let records = store.execution_records(container_id, execution_id, i64::MAX).await?;
        let mut history = ContainerHistory {
            container_id: container_id.to_owned(),
            owner: String::new(),
            seed: 0,
            image_hash: String::new(),
            forked_from: None,
            executions: Vec::new(),
            closed: None,
        };
        let read = history.continue_with(&records);
        let execution = match (&read, history.execution(execution_id)) {
            (Ok(()), Some(execution)) if execution.finished.is_some() => return Ok(()),
            (Ok(()), Some(execution)) => Some(execution),
            (Ok(()), None) => return Ok(()),
            (Err(why), _) => {
                tracing::error!(container = %container_id, execution = %execution_id, error = %why,
                    "an interrupted execution's records cannot be read; marking it without them");
                None
            }
        };
        let now = crate::audit::unix_ms(SystemTime::now());
        let ledger = execution.map_or(&[][..], |e| e.ledger.as_slice());
        let known = execution.map(|e| e.tool_names()).unwrap_or_default();
        let mut auto_counts = crate::audit::AutoCounts::default();
        for call in ledger {
            if known.contains(&call.tool) {
                *auto_counts.calls_per_tool.entry(call.tool.clone()).or_default() += 1;
            } else {
                auto_counts.unknown_tool_calls += 1;
            }
        }
        let usage = Usage { tool_calls: ledger.len() as u64, ..Usage::default() };
        let error_message = match &read {
            Ok(()) => "the process running the execution stopped before it finished".to_owned(),
            Err(why) => format!("the process running the execution stopped; its records could not be read: {why}"),
        };
        let mut events = Vec::new();
        for call in ledger.iter().filter(|c| !c.status.is_final()) {
            let mut call = call.clone();
            call.status = CallStatus::Cancelled;
            call.error_code = Some(crate::call::FailureCode::Interrupted);
            call.error_message =
                Some("the process running the execution stopped; the call's outcome is unknown".into());
            call.finished_at = Some(now);
            events.push(Event::ToolCall { execution_id: execution_id.to_owned(), call });
        }
        events.push(Event::ExecutionFinished(crate::audit::Finished {
            execution_id: execution_id.to_owned(),
            status: crate::audit::FinishStatus::Failed,
            outcome: crate::audit::Ending::Interrupted,
            return_code: i64::from(crate::sandbox::STOPPED_RETURN_CODE),
            stdout: String::new(),
            stderr: String::new(),
            value_repr: None,
            exception: None,
            error_message: Some(error_message),
            counts: Default::default(),
            auto_counts,
            usage,
            finished_at: now,
        }));
        store.append(container_id, &events).await?;
        Ok(())
    }

    /// A service whose events go to `recorder` (benchmarks compare recorders this way).
    pub fn with_recorder(sandbox: Sandbox, config: ServiceConfig, recorder: Arc<dyn Recorder>) -> Self {
        Self::build(sandbox, config, recorder, None)
    }

    fn build(sandbox: Sandbox, config: ServiceConfig, recorder: Arc<dyn Recorder>, store: Option<Arc<Store>>) -> Self {
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

    // -- tools -----------------------------------------------------------------------

    /// Registers a tool for `owner`; an `http` tool's URL must be one the operator allows.
    pub fn create_tool(&self, owner: &Owner, definition: ToolDefinition) -> Result<Arc<Tool>, ServiceError> {
        use crate::tools::registry::RegistryError;
        self.check_destination(&definition)?;
        self.inner.registry.create(owner, definition).map_err(|e| match e {
            RegistryError::Invalid(m) => ServiceError::InvalidRequest(m),
            RegistryError::Exists(_) => ServiceError::Conflict(e.to_string()),
            RegistryError::Quota(_) => ServiceError::Quota(e.to_string()),
        })
    }

    /// `owner`'s tools, by name.
    pub fn list_tools(&self, owner: &Owner) -> Vec<Arc<Tool>> {
        self.inner.registry.list(owner)
    }

    pub fn get_tool(&self, owner: &Owner, name: &str) -> Result<Arc<Tool>, ServiceError> {
        self.inner.registry.get(owner, name).ok_or_else(|| ServiceError::NotFound(format!("tool {name}")))
    }

    pub fn delete_tool(&self, owner: &Owner, name: &str) -> Result<(), ServiceError> {
        if self.inner.registry.delete(owner, name) {
            Ok(())
        } else {
            Err(ServiceError::NotFound(format!("tool {name}")))
        }
    }

    /// Refuses an `http` tool whose URL is not under a prefix the operator allows.
    fn check_destination(&self, definition: &ToolDefinition) -> Result<(), ServiceError> {
        match &definition.executor {
            Executor::Http { url } => self
                .inner
                .config
                .http
                .check_url(url)
                .map_err(|e| ServiceError::InvalidRequest(format!("tool {}: {e}", definition.name))),
            Executor::Client => Ok(()),
        }
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
    async fn detached<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, ServiceError>> + Send + 'static,
    ) -> Result<T, ServiceError> {
        tokio::spawn(work).await.unwrap_or_else(|e| Err(ServiceError::Internal(format!("the work failed: {e}"))))
    }

    // -- containers ------------------------------------------------------------------

    pub async fn create_container(&self, owner: &Owner) -> Result<ContainerView, ServiceError> {
        let (this, owner) = (self.clone(), owner.clone());
        self.detached(async move {
            let entry = this.new_container(&owner).await?;
            Ok(this.container_view(&entry, ContainerState::Idle, 0))
        })
        .await
    }

    pub async fn get_container(&self, owner: &Owner, id: Uuid) -> Result<ContainerView, ServiceError> {
        let (this, owner) = (self.clone(), owner.clone());
        self.detached(async move { this.get_container_now(&owner, id).await }).await
    }

    async fn get_container_now(&self, owner: &Owner, id: Uuid) -> Result<ContainerView, ServiceError> {
        let entry = self.container(owner, id).await?;
        if entry.is_retired() {
            return Err(moved(id));
        }
        let (state, executions) = match entry.slot.try_lock() {
            Ok(slot) if slot.waiting.is_some() => (ContainerState::WaitingForTools, slot.container.executions()),
            Ok(slot) => (ContainerState::Idle, slot.container.executions()),
            Err(_) => (ContainerState::Running, 0),
        };
        Ok(self.container_view(&entry, state, executions))
    }

    /// Removes a container; an execution waiting for client tools in it is ended as
    /// interrupted. A container whose script is running is busy (409).
    pub async fn delete_container(&self, owner: &Owner, id: Uuid) -> Result<(), ServiceError> {
        let (this, owner) = (self.clone(), owner.clone());
        self.detached(async move {
            let entry = this.container(&owner, id).await?;
            let mut slot = entry
                .slot
                .try_lock()
                .map_err(|_| ServiceError::Conflict(format!("container {id} is running an execution")))?;
            if entry.is_retired() {
                return Err(moved(id));
            }
            this.interrupt_waiting(&mut slot, "the container was deleted").await;
            this.forget_container(id, Gone::Deleted);
            this.retire(&entry, &mut slot);
            this.close(id, "deleted").await
        })
        .await
    }

    /// This node no longer runs the container: its instance goes back to the pool, and
    /// anyone still holding the entry finds it retired.
    fn retire(&self, entry: &ContainerEntry, slot: &mut Slot) {
        entry.retired.store(true, Ordering::Release);
        slot.waiting = None;
        slot.container.retire();
    }

    /// Records that a container was closed (`deleted`, `expired`) and drops its snapshot: its
    /// history stays in the audit trail, and it is never rebuilt from it.
    async fn close(&self, id: Uuid, reason: &str) -> Result<(), ServiceError> {
        match &self.inner.store {
            Some(store) => self.close_stored(store, &id.to_string(), reason).await,
            None => {
                let closed = Event::ContainerClosed { reason: reason.to_owned() };
                Ok(self.inner.recorder.record(&id.to_string(), vec![closed]).await?)
            }
        }
    }

    async fn new_container(&self, owner: &Owner) -> Result<Arc<ContainerEntry>, ServiceError> {
        if self.inner.shutting_down.load(Ordering::Relaxed) {
            return Err(ServiceError::ShuttingDown);
        }
        self.check_container_quota(owner).await?;
        self.make_room().await?;
        let container = self.inner.sandbox.create_container().await?;
        self.adopt_new(owner, container, None, 0).await
    }

    /// Takes a container just made (new or forked) into service: records its creation,
    /// leases it and lists it, dirty so that it is saved.
    async fn adopt_new(
        &self,
        owner: &Owner,
        container: Container,
        forked_from: Option<crate::audit::ForkPoint>,
        started: u64,
    ) -> Result<Arc<ContainerEntry>, ServiceError> {
        let id = container.id();
        let created = Event::ContainerCreated {
            owner: owner.clone(),
            seed: container.seed().to_string(),
            image_hash: self.inner.sandbox.image_hash().to_owned(),
            forked_from,
        };
        self.inner.recorder.record(&id.to_string(), vec![created]).await?;
        self.acquire_lease_waiting(&id.to_string()).await?;
        let now = SystemTime::now();
        let entry = self.held_entry(container, owner.clone(), (now, now), started, true);
        lock(&self.inner.containers).insert(id, entry.clone());
        self.inner.metrics.container_created();
        Ok(entry)
    }

    /// A container as this node holds it: leased from now for the configured time.
    fn held_entry(
        &self,
        container: Container,
        owner: Owner,
        (created_at, last_used): (SystemTime, SystemTime),
        started: u64,
        dirty: bool,
    ) -> Arc<ContainerEntry> {
        Arc::new(ContainerEntry {
            id: container.id(),
            owner,
            created_at,
            started: started.into(),
            lease_until: Mutex::new(Instant::now() + self.inner.config.lease_ttl),
            dirty: dirty.into(),
            last_used: Mutex::new(last_used),
            retired: AtomicBool::new(false),
            slot: tokio::sync::Mutex::new(Slot { container, waiting: None }),
        })
    }

    /// A container of `owner`: in memory, or restored from its snapshot. Another owner's
    /// container is as unknown as a missing one.
    async fn container(&self, owner: &Owner, id: Uuid) -> Result<Arc<ContainerEntry>, ServiceError> {
        let found = lock(&self.inner.containers).get(&id).cloned();
        match found {
            Some(entry) if &entry.owner == owner => Ok(entry),
            Some(_) => Err(ServiceError::NotFound(format!("container {id}"))),
            None => self.restore(owner, id).await,
        }
    }

    /// Makes room for a new container of `owner` within its quota: with a store, by saving
    /// and unloading the key's own least recently used idle container; else refused.
    async fn check_container_quota(&self, owner: &Owner) -> Result<(), ServiceError> {
        let quota = self.inner.config.quotas.containers;
        loop {
            let mut own: Vec<Arc<ContainerEntry>> =
                lock(&self.inner.containers).values().filter(|e| &e.owner == owner).cloned().collect();
            if own.len() < quota {
                return Ok(());
            }
            let live = own.len();
            let refused = || {
                ServiceError::Quota(format!(
                    "this API key has {live} live containers, the most it may (delete or let some expire)"
                ))
            };
            if self.inner.store.is_none() {
                return Err(refused());
            }
            own.sort_by_key(|e| *lock(&e.last_used));
            let mut unloaded = false;
            for entry in &own {
                let Ok(mut slot) = entry.slot.try_lock() else { continue };
                if entry.is_retired() || slot.waiting.is_some() {
                    continue;
                }
                if self.unload(entry, &mut slot).await.is_ok() {
                    self.inner.metrics.container_evicted();
                    unloaded = true;
                    break;
                }
            }
            if !unloaded {
                return Err(refused());
            }
        }
    }

    /// Refuses a new execution to a key with as many waiting for tool results as it may have.
    fn check_waiting_quota(&self, owner: &Owner) -> Result<(), ServiceError> {
        let waiting = lock(&self.inner.live_executions)
            .values()
            .filter(|e| &e.owner == owner && lock(&e.view).status == ExecutionStatus::RequiresAction)
            .count();
        if waiting >= self.inner.config.quotas.waiting_executions {
            return Err(ServiceError::Quota(format!(
                "this API key has {waiting} executions waiting for tool results, the most it may"
            )));
        }
        Ok(())
    }

    fn expires_at(&self, entry: &ContainerEntry) -> SystemTime {
        let idle_end = *lock(&entry.last_used) + self.inner.config.idle_timeout;
        idle_end.min(entry.created_at + self.inner.config.max_age)
    }

    fn container_view(&self, entry: &ContainerEntry, state: ContainerState, executions: u64) -> ContainerView {
        ContainerView {
            id: entry.id,
            created_at: entry.created_at,
            expires_at: self.expires_at(entry),
            state,
            executions,
        }
    }

    fn touch(&self, entry: &ContainerEntry) {
        *lock(&entry.last_used) = SystemTime::now();
    }

    fn forget_container(&self, id: Uuid, why: Gone) {
        lock(&self.inner.containers).remove(&id);
        lock(&self.inner.gone).insert(id, why, 0);
    }

    fn spawn_reaper(&self) {
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            // Often enough that a lease is renewed well before it lapses.
            let period = match weak.upgrade() {
                Some(inner) => REAP_INTERVAL.min(inner.config.lease_ttl / 4),
                None => return,
            };
            let mut tick = tokio::time::interval(period);
            loop {
                tick.tick().await;
                let Some(inner) = weak.upgrade() else { return };
                Service { inner }.reap().await;
            }
        });
    }

    /// Removes containers past their idle time or maximum age (not while a script runs),
    /// saves idle ones that changed, and renews leases.
    async fn reap(&self) {
        let now = SystemTime::now();
        let due: Vec<Arc<ContainerEntry>> =
            lock(&self.inner.containers).values().filter(|e| self.expires_at(e) <= now).cloned().collect();
        for entry in due {
            let Ok(mut slot) = entry.slot.try_lock() else { continue };
            if entry.is_retired() {
                continue;
            }
            self.interrupt_waiting(&mut slot, "the container expired").await;
            self.forget_container(entry.id, Gone::Expired);
            self.retire(&entry, &mut slot);
            if let Err(e) = self.close(entry.id, "expired").await {
                tracing::warn!(container = %entry.id, error = %e, "could not record an expired container");
            }
            self.inner.metrics.container_expired();
        }
        self.save_idle().await;
        self.renew_leases().await;
    }

    // -- executions ------------------------------------------------------------------

    /// Runs a new execution until it completes, fails or needs client tool results.
    pub async fn create_execution(&self, owner: &Owner, request: NewExecution) -> Result<ExecutionView, ServiceError> {
        let (this, owner) = (self.clone(), owner.clone());
        self.detached(async move { this.create_execution_now(&owner, request).await }).await
    }

    async fn create_execution_now(&self, owner: &Owner, request: NewExecution) -> Result<ExecutionView, ServiceError> {
        if self.inner.shutting_down.load(Ordering::Relaxed) {
            return Err(ServiceError::ShuttingDown);
        }
        if request.code.len() > MAX_CODE_BYTES {
            return Err(ServiceError::InvalidRequest(format!("code is longer than {MAX_CODE_BYTES} bytes")));
        }
        let toolset = self.toolset(owner, &request)?;
        self.check_waiting_quota(owner)?;
        let limits = self
            .inner
            .config
            .defaults
            .with_overrides(&request.limits, &self.inner.config.maxima)
            .map_err(|e| ServiceError::InvalidRequest(e.to_string()))?;
        let entry = match request.container {
            Some(id) => self.container(owner, id).await?,
            None => self.new_container(owner).await?,
        };
        let mut slot = entry
            .slot
            .try_lock()
            .map_err(|_| ServiceError::Conflict(format!("container {} is running an execution", entry.id)))?;
        if entry.is_retired() {
            return Err(moved(entry.id));
        }
        if let Some(waiting) = &slot.waiting {
            return Err(ServiceError::Conflict(format!(
                "container {} has execution {} waiting for tool results",
                entry.id, waiting.id
            )));
        }
        self.touch(&entry);
        let id = format!("exec_{}", Uuid::new_v4().simple());
        let context = RunContext {
            execution_id: id.clone(),
            container_id: entry.id.to_string(),
            owner: owner.clone(),
            number: entry.started.fetch_add(1, Ordering::Relaxed) + 1,
        };
        let mut run = Run::new(context, toolset, limits, self.inner.recorder.clone());
        let view = ExecutionView {
            id: id.clone(),
            container_id: entry.id,
            container_expires_at: self.expires_at(&entry),
            code: request.code.clone(),
            status: ExecutionStatus::Running,
            tool_uses: Vec::new(),
            outcome: None,
            error: None,
            usage: Usage::default(),
            ledger: Vec::new(),
            created_at: SystemTime::now(),
        };
        let execution = Arc::new(ExecutionEntry { owner: owner.clone(), view: Mutex::new(view) });
        self.remember_execution(id, execution.clone());
        let dispatcher = ServiceDispatcher { http: &self.inner.config.http };
        let progress = run.start(&mut slot.container, &request.code, &dispatcher).await;
        let view = self.after_progress(&entry, &mut slot, &execution, run, progress);
        self.save_after_execution(&entry, &mut slot).await;
        Ok(view)
    }

    /// An execution waiting for client tool results is saved at once, so it survives a
    /// restart (or another node can take the answer); others when configured so.
    async fn save_after_execution(&self, entry: &ContainerEntry, slot: &mut Slot) {
        entry.dirty.store(true, Ordering::Relaxed);
        if (slot.waiting.is_some() || self.inner.config.snapshot_every_execution)
            && let Err(e) = self.persist(entry, slot).await
        {
            tracing::warn!(container = %entry.id, error = %e, "could not save a container after an execution");
        }
    }

    /// An execution: from memory while the node holds it, else from the audit store.
    pub async fn get_execution(&self, owner: &Owner, id: &str) -> Result<ExecutionView, ServiceError> {
        if let Ok(entry) = self.find_execution(owner, id) {
            return Ok(lock(&entry.view).clone());
        }
        let history = self.stored_history(owner, id).await?;
        let execution = history.execution(id).ok_or_else(|| ServiceError::NotFound(format!("execution {id}")))?;
        let mut view = view_from_history(&history, execution);
        if execution.finished.is_none()
            && let Some((tool_uses, usage)) = self.stored_waiting_view(&history.container_id, id).await
        {
            view.status = ExecutionStatus::RequiresAction;
            view.error = None;
            view.tool_uses = tool_uses;
            view.usage = usage;
        }
        Ok(view)
    }

    /// The container history an execution belongs to, if `owner` may see it.
    async fn stored_history(&self, owner: &Owner, execution_id: &str) -> Result<ContainerHistory, ServiceError> {
        let not_found = || ServiceError::NotFound(format!("execution {execution_id}"));
        let store = self.inner.store.as_ref().ok_or_else(not_found)?;
        let (container_id, stored_owner) = store.container_of(execution_id).await?.ok_or_else(not_found)?;
        if &stored_owner != owner {
            return Err(not_found());
        }
        // The index says who may look; the sealed chain must say the same.
        let history = store
            .verified_history(&container_id)
            .await
            .map_err(|e| ServiceError::Conflict(format!("the audit trail does not verify: {e}")))?
            .ok_or_else(not_found)?;
        match history.execution(execution_id) {
            Some(execution) if &execution.owner == owner && &history.owner == owner => Ok(history),
            _ => Err(not_found()),
        }
    }

    /// Executions in the audit store, newest first.
    pub async fn list_executions(
        &self,
        owner: &Owner,
        mut filter: ExecutionFilter,
    ) -> Result<Vec<ExecutionRow>, ServiceError> {
        let store = self.store()?;
        filter.owner = Some(owner.clone());
        Ok(store.list_executions(&filter).await?)
    }

    /// A container's whole chain, for export.
    pub async fn container_records(&self, owner: &Owner, id: Uuid) -> Result<Vec<Record>, ServiceError> {
        let store = self.store()?;
        let id = id.to_string();
        let not_found = || ServiceError::NotFound(format!("container {id}"));
        if store.container_owner(&id).await?.as_ref() != Some(owner) {
            return Err(not_found());
        }
        let records = store.records(&id).await?;
        // Exported as stored (a broken chain is the reader's to see), but only to the owner
        // the sealed chain names.
        let created = records.first().and_then(|r| r.event().ok());
        match created {
            Some(Event::ContainerCreated { owner: sealed_owner, .. })
                if &sealed_owner == owner && crate::audit::record_seal_holds(store.chain_key(), &records[0]) =>
            {
                Ok(records)
            }
            _ => Err(not_found()),
        }
    }

    /// Replays an execution from its container's recorded history.
    pub async fn replay(&self, owner: &Owner, execution_id: &str) -> Result<ReplayReport, ServiceError> {
        let _permit = self.inner.replays.admit(owner, &self.inner.config.quotas)?;
        let history = self.stored_history(owner, execution_id).await?;
        let history = self.full_history(&history.container_id).await?;
        replay(&self.inner.sandbox, &history, execution_id).await.map_err(|e| match e {
            super::replay::ReplayError::Sandbox(e) => ServiceError::from(e),
            other => ServiceError::Conflict(other.to_string()),
        })
    }

    fn store(&self) -> Result<&Arc<Store>, ServiceError> {
        self.inner
            .store
            .as_ref()
            .ok_or_else(|| ServiceError::InvalidRequest("this service keeps no audit store".into()))
    }

    /// Answers every pending client call of an execution and runs it on.
    pub async fn submit_tool_results(
        &self,
        owner: &Owner,
        id: &str,
        answers: Vec<(String, Result<String, ToolFailure>)>,
    ) -> Result<ExecutionView, ServiceError> {
        let (this, owner, id) = (self.clone(), owner.clone(), id.to_owned());
        self.detached(async move { this.submit_tool_results_now(&owner, &id, answers).await }).await
    }

    async fn submit_tool_results_now(
        &self,
        owner: &Owner,
        id: &str,
        answers: Vec<(String, Result<String, ToolFailure>)>,
    ) -> Result<ExecutionView, ServiceError> {
        let container_id = match self.find_execution(owner, id) {
            Ok(execution) => lock(&execution.view).container_id,
            Err(not_here) => {
                // Saved waiting in a container this node does not hold: bring it here.
                let store = self.inner.store.as_ref().ok_or(not_here)?;
                let (container_id, stored_owner) =
                    store.container_of(id).await?.ok_or_else(|| ServiceError::NotFound(format!("execution {id}")))?;
                if &stored_owner != owner {
                    return Err(ServiceError::NotFound(format!("execution {id}")));
                }
                container_id
                    .parse()
                    .map_err(|_| ServiceError::Internal("a stored container id is not a UUID".into()))?
            }
        };
        let entry = self.container(owner, container_id).await?;
        let execution = self.find_execution(owner, id)?;
        // Not waiting behind a running script: a request that would only queue is refused.
        let mut slot = entry
            .slot
            .try_lock()
            .map_err(|_| ServiceError::Conflict(format!("execution {id} is not waiting for tool results")))?;
        if entry.is_retired() {
            return Err(moved(entry.id));
        }
        let mut run = match slot.waiting.take() {
            Some(run) if run.id == id => run,
            other => {
                slot.waiting = other;
                return Err(ServiceError::Conflict(format!("execution {id} is not waiting for tool results")));
            }
        };
        if let Err(e) = run.check_answers(answers.iter().map(|(id, _)| id.as_str())) {
            slot.waiting = Some(run);
            return Err(ServiceError::InvalidRequest(e.to_string()));
        }
        self.touch(&entry);
        let dispatcher = ServiceDispatcher { http: &self.inner.config.http };
        let progress = run.answer(&mut slot.container, answers, &dispatcher).await;
        let view = self.after_progress(&entry, &mut slot, &execution, run, progress);
        self.save_after_execution(&entry, &mut slot).await;
        Ok(view)
    }

    fn find_execution(&self, owner: &Owner, id: &str) -> Result<Arc<ExecutionEntry>, ServiceError> {
        let live = lock(&self.inner.live_executions).get(id).cloned();
        live.or_else(|| lock(&self.inner.finished_executions).get(&id.to_owned()).cloned())
            .filter(|e| &e.owner == owner)
            .ok_or_else(|| ServiceError::NotFound(format!("execution {id}")))
    }

    /// Keeps a running (or waiting) execution where readers and `tool_results` find it.
    fn remember_execution(&self, id: String, entry: Arc<ExecutionEntry>) {
        lock(&self.inner.live_executions).insert(id, entry);
    }

    /// Moves a finished execution among the recent ones (which may forget it: the audit store
    /// has it).
    fn retire_execution(&self, id: &str) {
        let entry = lock(&self.inner.live_executions).remove(id);
        if let Some(entry) = entry {
            let weight = view_bytes(&lock(&entry.view));
            lock(&self.inner.finished_executions).insert(id.to_owned(), entry, weight);
        }
    }

    /// Publishes where the execution stands, keeps a waiting run in the slot, and arms the
    /// timer that moves it on if the client does not answer in time.
    fn after_progress(
        &self,
        entry: &Arc<ContainerEntry>,
        slot: &mut Slot,
        execution: &ExecutionEntry,
        run: Run,
        progress: Result<Progress, EngineError>,
    ) -> ExecutionView {
        self.touch(entry);
        let mut view = lock(&execution.view);
        view.container_expires_at = self.expires_at(entry);
        view.usage = run.usage.clone();
        view.ledger = run.ledger.clone();
        match progress {
            Ok(Progress::Finished(outcome)) => {
                let outcome = *outcome;
                let metrics = &self.inner.metrics;
                for call in &run.ledger {
                    metrics.tool_call(status_name(call.status));
                }
                metrics.execution_time(outcome.run_time);
                view.tool_uses.clear();
                view.status = match &outcome.stop {
                    None => ExecutionStatus::Completed,
                    Some(stop) => {
                        metrics.limit_hit(stop.code());
                        view.error =
                            Some(ExecutionError { kind: stop.code().into(), message: stop.message(&run.limits) });
                        ExecutionStatus::Failed
                    }
                };
                metrics.execution(if view.status == ExecutionStatus::Completed { "completed" } else { "failed" });
                self.count_tokens_later(&run, &outcome);
                view.outcome = Some(outcome);
            }
            Ok(Progress::WaitingForClient) => {
                self.inner.metrics.execution("requires_action");
                view.status = ExecutionStatus::RequiresAction;
                view.tool_uses = run.client_calls.iter().map(ToolUse::from).collect();
                if let Some(deadline) = run.next_deadline() {
                    self.arm_timer(entry.clone(), run.id.clone(), deadline);
                }
                slot.waiting = Some(run);
            }
            Err(error) => {
                view.status = ExecutionStatus::Failed;
                view.tool_uses.clear();
                view.error = Some(ExecutionError {
                    kind: crate::audit::Ending::InternalError.as_str().into(),
                    message: error.to_string(),
                });
                self.inner.metrics.execution("failed");
            }
        }
        let published = view.clone();
        // The view's lock is let go first: readers of the index take the index, then views.
        drop(view);
        if published.status != ExecutionStatus::RequiresAction {
            self.retire_execution(&published.id);
        }
        published
    }

    /// Tokenizing what stayed in and what came out takes milliseconds for large results, so
    /// it happens after the answer, into the executions index: one execution at a time, at
    /// a bounded cost each (see [`super::tokens`]); when too many wait, only estimates are
    /// recorded.
    fn count_tokens_later(&self, run: &Run, outcome: &Outcome) {
        let Some(store) = self.inner.store.clone() else { return };
        let inside = super::tokens::Sample::of(run.ledger.iter().filter_map(|c| c.result.as_deref()));
        let returned = [outcome.stdout.as_str(), outcome.stderr.as_str(), outcome.value_repr.as_deref().unwrap_or("")];
        let returned = super::tokens::Sample::of(returned);
        let id = run.id.clone();
        let queue = self.inner.token_queue.clone();
        let turn = self.inner.token_turn.clone();
        tokio::spawn(async move {
            // Queued: counted in turn. Not queued (too many wait): estimated at once.
            let place = queue.try_acquire_owned().ok();
            let turn = match &place {
                Some(_) => turn.acquire_owned().await.ok(),
                None => None,
            };
            let (inside, returned) = if turn.is_some() {
                match tokio::task::spawn_blocking(move || (inside.count(), returned.count())).await {
                    Ok(counted) => counted,
                    Err(_) => return,
                }
            } else {
                (inside.estimate(), returned.estimate())
            };
            let estimated = inside.estimated || returned.estimated;
            if let Err(e) = store.set_tokens(&id, inside.tokens as i64, returned.tokens as i64, estimated).await {
                tracing::warn!(execution = %id, error = %e, "could not record token counts");
            }
        });
    }

    /// Moves a waiting execution on at `deadline`. The timer holds neither the service nor
    /// the container: one deleted or unloaded meanwhile is let go, not kept for the timer.
    fn arm_timer(&self, entry: Arc<ContainerEntry>, execution_id: String, deadline: Instant) {
        let (service, entry) = (Arc::downgrade(&self.inner), Arc::downgrade(&entry));
        tokio::spawn(async move {
            tokio::time::sleep_until(deadline.into()).await;
            let (Some(inner), Some(entry)) = (service.upgrade(), entry.upgrade()) else { return };
            Service { inner }.on_timer(entry, &execution_id).await;
        });
    }

    /// A client call ran past `pending_timeout_ms`, or a timer of the script fell due.
    async fn on_timer(&self, entry: Arc<ContainerEntry>, execution_id: &str) {
        let mut slot = entry.slot.lock().await;
        if entry.is_retired() {
            return;
        }
        let run = match slot.waiting.take() {
            Some(run) if run.id == execution_id => run,
            other => {
                slot.waiting = other;
                return;
            }
        };
        let now = Instant::now();
        if run.next_deadline().is_none_or(|deadline| deadline > now) {
            if let Some(deadline) = run.next_deadline() {
                self.arm_timer(entry.clone(), run.id.clone(), deadline);
            }
            slot.waiting = Some(run);
            return;
        }
        let Some(execution) = lock(&self.inner.live_executions).get(execution_id).cloned() else {
            slot.waiting = Some(run);
            return;
        };
        let mut run = run;
        let dispatcher = ServiceDispatcher { http: &self.inner.config.http };
        let progress = run.expire(&mut slot.container, now, &dispatcher).await;
        self.after_progress(&entry, &mut slot, &execution, run, progress);
        self.save_after_execution(&entry, &mut slot).await;
    }

    /// Ends an execution that waits for client tools, rolling its container back.
    async fn interrupt_waiting(&self, slot: &mut Slot, why: &str) {
        let Some(mut run) = slot.waiting.take() else { return };
        let outcome = slot.container.abort(why).await.ok();
        if let Some(outcome) = &outcome
            && let Err(e) = run.record_interrupted(outcome, why).await
        {
            tracing::error!(execution = %run.id, error = %e, "could not record an interrupted execution");
        }
        let execution = lock(&self.inner.live_executions).get(&run.id).cloned();
        if let Some(execution) = execution {
            let mut view = lock(&execution.view);
            view.status = ExecutionStatus::Failed;
            view.tool_uses.clear();
            view.error = Some(ExecutionError {
                kind: crate::audit::Ending::Interrupted.as_str().into(),
                message: why.to_owned(),
            });
            view.outcome = outcome;
            view.ledger = run.ledger;
            self.inner.metrics.execution("failed");
        }
        self.retire_execution(&run.id);
    }

    /// Refuses new executions and containers from now on (the start of a shutdown).
    pub fn refuse_new_work(&self) {
        self.inner.shutting_down.store(true, Ordering::Relaxed);
    }

    /// Stops every script running now: each ends `interrupted`, its container rolled back.
    pub fn interrupt_running(&self) {
        self.inner.sandbox.halt_running();
    }

    /// Refuses new work, then saves every container to the store (an execution waiting for
    /// client tools resumes after the restart) and hands back its lease, within
    /// [`SHUTDOWN_SAVE_BUDGET`]: a container still busy after that is left as it is (its state
    /// is rebuilt from the audit trail at its next use). Without a store, executions waiting
    /// for client tools end as interrupted.
    pub async fn shutdown(&self) {
        self.refuse_new_work();
        let give_up = tokio::time::Instant::now() + SHUTDOWN_SAVE_BUDGET;
        let entries: Vec<_> = lock(&self.inner.containers).values().cloned().collect();
        let mut left = 0;
        for entry in entries {
            let saved = tokio::time::timeout_at(give_up, async {
                let mut slot = entry.slot.lock().await;
                if entry.is_retired() {
                    return;
                }
                if self.inner.store.is_none() {
                    self.interrupt_waiting(&mut slot, "the service shut down").await;
                    return;
                }
                if let Err(e) = self.unload(&entry, &mut slot).await {
                    tracing::error!(container = %entry.id, error = %e, "could not save a container at shutdown");
                    self.interrupt_waiting(&mut slot, "the service shut down and could not save the container").await;
                }
            })
            .await;
            left += usize::from(saved.is_err());
        }
        if left > 0 {
            tracing::warn!(containers = left, "not saved at shutdown in time: they are rebuilt from the audit trail");
        }
    }

    /// Inline tools plus `owner`'s registered ones by name; names must not repeat.
    fn toolset(&self, owner: &Owner, request: &NewExecution) -> Result<Toolset, ServiceError> {
        if request.tools.len() + request.tool_names.len() > MAX_TOOLS_PER_EXECUTION {
            return Err(ServiceError::InvalidRequest(format!("at most {MAX_TOOLS_PER_EXECUTION} tools per execution")));
        }
        let mut tools: BTreeMap<String, Arc<Tool>> = BTreeMap::new();
        let named = request.tool_names.iter().map(|name| {
            self.inner
                .registry
                .get(owner, name)
                .ok_or_else(|| ServiceError::InvalidRequest(format!("tool_names: no registered tool named {name:?}")))
        });
        let inline = request.tools.iter().map(|d| {
            self.check_destination(d)?;
            Tool::new(d.clone()).map_err(ServiceError::InvalidRequest)
        });
        for tool in inline.chain(named) {
            let tool = tool?;
            if tools.insert(tool.name().to_owned(), tool.clone()).is_some() {
                return Err(ServiceError::InvalidRequest(format!("tool {:?} is given twice", tool.name())));
            }
        }
        Ok(Toolset::new(tools.into_values()))
    }
}

/// An execution's view rebuilt from the audit trail (after a restart, or once evicted).
fn view_from_history(history: &ContainerHistory, execution: &crate::audit::ExecutionHistory) -> ExecutionView {
    let at = |ms: u64| SystemTime::UNIX_EPOCH + Duration::from_millis(ms);
    let finished = execution.finished.as_ref();
    let outcome = finished.map(|f| Outcome {
        stdout: f.stdout.clone(),
        stderr: f.stderr.clone(),
        return_code: i32::try_from(f.return_code).unwrap_or(1),
        value_repr: f.value_repr.clone(),
        error: f.exception.as_ref().map(|e| crate::sandbox::PythonError {
            kind: e.kind.clone(),
            message: e.message.clone(),
            traceback: e.traceback.clone(),
        }),
        counts: f.counts.clone(),
        stop: None,
        run_time: Duration::from_millis(f.usage.time_ms),
        tool_calls: f.usage.tool_calls,
    });
    let status = match finished {
        Some(f) if f.status == crate::audit::FinishStatus::Completed => ExecutionStatus::Completed,
        Some(_) => ExecutionStatus::Failed,
        // Started but never finished on record: the node holding it stopped.
        None => ExecutionStatus::Failed,
    };
    let error = match finished {
        Some(f) if f.status != crate::audit::FinishStatus::Completed => Some(ExecutionError {
            kind: f.outcome.as_str().into(),
            message: f.error_message.clone().unwrap_or_default(),
        }),
        None => Some(ExecutionError {
            kind: crate::audit::Ending::Interrupted.as_str().into(),
            message: "the execution did not finish on record (the node running it stopped)".into(),
        }),
        _ => None,
    };
    ExecutionView {
        id: execution.execution_id.clone(),
        container_id: history.container_id.parse().unwrap_or_default(),
        container_expires_at: at(finished.map_or(execution.started_at, |f| f.finished_at)),
        code: execution.code.clone(),
        status,
        tool_uses: Vec::new(),
        outcome,
        error,
        usage: finished.map(|f| f.usage.clone()).unwrap_or_default(),
        ledger: execution.ledger.clone(),
        created_at: at(execution.started_at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_match_the_ledger() {
        assert_eq!(status_name(CallStatus::TimedOut), CallStatus::TimedOut.name());
    }

    #[test]
    fn execution_status_serializes_as_the_contract_says() {
        assert_eq!(serde_json::to_value(ExecutionStatus::RequiresAction).unwrap(), "requires_action");
        assert_eq!(serde_json::to_value(ExecutionStatus::Completed).unwrap(), "completed");
    }

    #[test]
    fn unix_ms_counts_from_the_epoch() {
        assert_eq!(super::super::unix_ms(SystemTime::UNIX_EPOCH + Duration::from_millis(1234)), 1234);
    }
}
