//! How the service runs: idle and age limits, the limits of executions, what it keeps in
//! memory, when it saves containers, leases when several nodes share a store, quotas, and
//! where `http` tools may go.

use super::*;

/// Anthropic's containers expire after five idle minutes.
pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
pub(crate) const DEFAULT_MAX_AGE: Duration = Duration::from_secs(4 * 3600);
/// Containers kept in memory before the least recently used idle one is unloaded.
pub(crate) const DEFAULT_MAX_LIVE_CONTAINERS: usize = 256;
/// A container that changed and has been idle this long is saved to the store.
pub(crate) const DEFAULT_SNAPSHOT_IDLE: Duration = Duration::from_secs(5);
/// With several nodes: how long a lease lasts without renewal.
pub(crate) const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(10);
/// A request for a container another node holds waits this many lease lifetimes (in
/// halves) before giving up: long enough to outlast a dead node's lease, plus a margin.
const LEASE_WAIT_HALF_TTLS: u32 = 3;
/// With several nodes: a container idle this long is saved and handed back.
pub(crate) const DEFAULT_HANDOFF_IDLE: Duration = Duration::from_millis(500);

#[derive(Debug, Clone)]
pub struct ServiceConfig {
    pub idle_timeout: Duration,
    pub max_age: Duration,
    /// Limits of an execution that asks for none.
    pub defaults: Limits,
    /// The largest limits a request may ask for.
    pub maxima: Limits,
    /// Containers kept in memory; beyond this the least recently used idle one is saved.
    /// Never more than the sandbox's slots (`SandboxConfig::max_containers`): the service
    /// lowers it to them.
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
    /// The operator's MCP servers, whose tools every key may name (none by default).
    pub mcp: McpServers,
    /// The operator's approval policy; without rules, calls to tools that require approval
    /// wait for a person and the others run.
    pub approvals: crate::tools::approval::ApprovalPolicy,
    /// Where executions' traces go over OTLP, if anywhere.
    pub otlp: Option<Arc<crate::engine::trace::OtlpExporter>>,
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
            mcp: McpServers::default(),
            approvals: Default::default(),
            otlp: None,
        }
    }
}
