//! One configured server: its catalog of tools, and its sessions (one per API key, or one
//! shared), each started on first use and again after it dies.

use super::{
    DEFAULT_CALL_TIMEOUT, MAX_SESSIONS_PER_SERVER, McpServerConfig, RESTART_BACKOFF, STARTUP_TIMEOUT, SessionIsolation,
    catalog_of, result_text,
};
use crate::call::{FailureCode, ToolFailure};
use crate::tools::Tool;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Map, Value};
use starting::connect;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// The scope of the session every key shares, and of the one that lists tools.
const SHARED_SCOPE: &str = "";
/// A server that could not be listed is listed again in the background no sooner than this
/// (once listed, a dead session is started again by the next call, after [`RESTART_BACKOFF`]).
const LISTING_RETRY: Duration = Duration::from_secs(30);
/// The longest ending a server's sessions takes at shutdown (a graceful stop waits for the
/// child a few seconds before it is killed).
const CLOSE_BUDGET: Duration = Duration::from_secs(2);
/// What `${SLUICE_OWNER}` reads as in the shared session's configuration.
const SHARED_OWNER: &str = "shared";

/// A server's tools as Sluice tools, by Sluice name.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    pub(crate) tools: BTreeMap<String, Arc<Tool>>,
}

/// A catalog as one session last listed it: `None` until then.
type SharedCatalog = Arc<RwLock<Option<Catalog>>>;

/// A live MCP session.
struct Session {
    service: RunningService<RoleClient, Listener>,
}

impl Session {
    /// Whether it can still carry a call: not cancelled, and its transport not closed (a stdio
    /// child that exited closes the transport without cancelling the service).
    fn is_live(&self) -> bool {
        !self.service.is_closed() && !self.service.peer().is_transport_closed()
    }
}

/// One scope's session (a key's, or the shared one), what that session listed, and when it
/// last failed to start. Its lock is held while the session starts, so two calls of one key
/// never start two processes, while other keys go on.
#[derive(Default)]
struct Slot {
    session: tokio::sync::Mutex<Option<Arc<Session>>>,
    last_used: Mutex<Option<Instant>>,
    /// The tools this session listed after it said its list changed (a key's session of a
    /// stateful server may offer tools the others do not); the shared slot's is the server's.
    catalog: SharedCatalog,
    /// When a start last failed (the next waits [`RESTART_BACKOFF`]).
    failed_start: Mutex<Option<Instant>>,
}

impl Slot {
    /// Neither starting nor carrying a call: safe to close.
    fn is_idle(&self) -> bool {
        self.session.try_lock().is_ok_and(|held| held.as_ref().is_none_or(|s| Arc::strong_count(s) == 1))
    }

    fn failed_within(&self, window: Duration) -> bool {
        lock(&self.failed_start).is_some_and(|at| at.elapsed() < window)
    }

    fn touch(&self) {
        *lock(&self.last_used) = Some(Instant::now());
    }
}

pub(crate) struct Server {
    pub(crate) name: String,
    config: Arc<McpServerConfig>,
    /// The shared session's slot, whose catalog every key sees unless its own session listed
    /// its own.
    shared: Arc<Slot>,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    /// A listing runs in the background.
    listing: AtomicBool,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("name", &self.name).finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn read(catalog: &SharedCatalog) -> std::sync::RwLockReadGuard<'_, Option<Catalog>> {
    catalog.read().unwrap_or_else(|p| p.into_inner())
}

fn unavailable(message: String) -> ToolFailure {
    ToolFailure::new(FailureCode::Unavailable, message)
}

impl Server {
    pub(crate) fn new(name: String, config: McpServerConfig) -> Arc<Self> {
        let shared = Arc::new(Slot::default());
        let slots = HashMap::from([(SHARED_SCOPE.to_owned(), shared.clone())]);
        Arc::new(Self {
            name,
            config: Arc::new(config),
            shared,
            slots: Mutex::new(slots),
            listing: AtomicBool::new(false),
        })
    }

    fn scope<'a>(&self, owner: &'a str) -> &'a str {
        match self.config.isolation {
            SessionIsolation::PerKey => owner,
            SessionIsolation::Shared => SHARED_SCOPE,
        }
    }

    /// The catalog `owner` sees: its own session's listing if it has one, else the server's.
    fn catalog_for(&self, owner: Option<&str>) -> SharedCatalog {
        let own = owner.map(|o| self.scope(o)).and_then(|scope| lock(&self.slots).get(scope).cloned());
        match own {
            Some(slot) if read(&slot.catalog).is_some() => slot.catalog.clone(),
            _ => self.shared.catalog.clone(),
        }
    }

    /// The tools `owner` may call (every key's when `None`).
    pub(crate) fn tools(self: &Arc<Self>, owner: Option<&str>) -> Vec<Arc<Tool>> {
        let catalog = self.catalog_for(owner);
        let listed = read(&catalog);
        match listed.as_ref() {
            Some(catalog) => catalog.tools.values().cloned().collect(),
            None => {
                drop(listed);
                let _ = self.list_in_background();
                Vec::new()
            }
        }
    }

    pub(crate) fn tool(self: &Arc<Self>, owner: Option<&str>, name: &str) -> Option<Arc<Tool>> {
        let catalog = self.catalog_for(owner);
        let listed = read(&catalog);
        listed.as_ref().and_then(|c| c.tools.get(name).cloned())
    }

    /// Lists the server's tools (through the shared session) and keeps them.
    async fn refresh_catalog(&self) -> Result<usize, ToolFailure> {
        let session = self.session(SHARED_SCOPE).await?;
        let listed = tokio::time::timeout(STARTUP_TIMEOUT, session.service.peer().list_all_tools())
            .await
            .map_err(|_| unavailable(format!("MCP server {} did not list its tools in time", self.name)))?
            .map_err(|e| unavailable(format!("MCP server {} could not list its tools: {e}", self.name)))?;
        let catalog = catalog_of(&self.name, &self.config, &listed);
        let count = catalog.tools.len();
        *self.shared.catalog.write().unwrap_or_else(|p| p.into_inner()) = Some(catalog);
        Ok(count)
    }

    /// Lists the server's tools on a task of its own: at start, and again for a server that
    /// was never listed (it could not be reached), once at a time, no sooner than the backoff
    /// allows. `None` when a listing is under way or must wait.
    pub(crate) fn list_in_background(self: &Arc<Self>) -> Option<tokio::task::JoinHandle<()>> {
        if self.shared.failed_within(LISTING_RETRY) || self.listing.swap(true, Ordering::AcqRel) {
            return None;
        }
        let server = self.clone();
        Some(tokio::spawn(async move {
            match server.refresh_catalog().await {
                Ok(count) => tracing::info!(server = %server.name, tools = count, "MCP server connected"),
                Err(e) => tracing::warn!(server = %server.name, error = %e.message, "MCP server not reachable"),
            }
            server.listing.store(false, Ordering::Release);
        }))
    }

    pub(crate) async fn call(
        &self,
        tool: &str,
        input: &Map<String, Value>,
        owner: &str,
        timeout: Option<Duration>,
    ) -> Result<String, ToolFailure> {
        let scope = self.scope(owner);
        let session = self.session(scope).await?;
        let timeout = timeout.unwrap_or(DEFAULT_CALL_TIMEOUT);
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(input.clone());
        // Dropping the call at its timeout sends the server a cancellation (rmcp cancels on drop).
        let answered = tokio::time::timeout(timeout, session.service.peer().call_tool(params)).await;
        if let Some(slot) = lock(&self.slots).get(scope) {
            slot.touch();
        }
        match answered {
            Ok(Ok(result)) => result_text(result),
            // The server's own JSON-RPC error (an unknown tool, arguments it refuses).
            Ok(Err(rmcp::ServiceError::McpError(error))) => {
                Err(ToolFailure::new(FailureCode::ToolError, error.message))
            }
            Ok(Err(e)) => {
                // The session is broken (it may not know yet): the next call starts another.
                self.forget(scope, &session).await;
                Err(unavailable(format!(
                    "MCP server {} failed during the call ({e}); the next call starts a new session",
                    self.name
                )))
            }
            Err(_) => {
                // A server that does not answer may be stuck: the next call gets a fresh one.
                drop(session);
                self.forget_stuck(scope).await;
                Err(unavailable(format!(
                    "MCP server {} did not answer {tool} within {} ms; the tool may still have acted",
                    self.name,
                    timeout.as_millis()
                )))
            }
        }
    }

    /// The scope's live session, started (or started again) if it has none.
    async fn session(&self, scope: &str) -> Result<Arc<Session>, ToolFailure> {
        let slot = self.slot(scope)?;
        let mut session = slot.session.lock().await;
        slot.touch();
        if let Some(live) = session.as_ref().filter(|s| s.is_live()) {
            return Ok(live.clone());
        }
        if session.take().is_some() {
            tracing::warn!(server = %self.name, "MCP session ended; starting it again");
        }
        if slot.failed_within(RESTART_BACKOFF) {
            return Err(unavailable(format!(
                "MCP server {} failed to start less than {} ms ago",
                self.name,
                RESTART_BACKOFF.as_millis()
            )));
        }
        let listener =
            Listener { server: self.name.clone(), config: self.config.clone(), catalog: slot.catalog.clone() };
        let owner = if scope == SHARED_SCOPE { SHARED_OWNER } else { scope };
        let config = self.config.for_owner(owner);
        let connecting = connect(&self.name, &config, listener);
        let started = match tokio::time::timeout(STARTUP_TIMEOUT, connecting).await {
            Ok(started) => started,
            Err(_) => {
                Err(format!("MCP server {} did not finish starting within {} s", self.name, STARTUP_TIMEOUT.as_secs()))
            }
        };
        match started {
            Ok(service) => {
                *lock(&slot.failed_start) = None;
                let live = Arc::new(Session { service });
                *session = Some(live.clone());
                Ok(live)
            }
            Err(message) => {
                *lock(&slot.failed_start) = Some(Instant::now());
                Err(unavailable(message))
            }
        }
    }

    /// Drops `session` from the scope's slot if it is still there.
    async fn forget(&self, scope: &str, session: &Arc<Session>) {
        let slot = lock(&self.slots).get(scope).cloned();
        if let Some(slot) = slot {
            let mut held = slot.session.lock().await;
            if held.as_ref().is_some_and(|h| Arc::ptr_eq(h, session)) {
                *held = None;
            }
        }
    }

    /// Ends the scope's session after a call it did not answer, unless other calls still use it.
    async fn forget_stuck(&self, scope: &str) {
        let slot = lock(&self.slots).get(scope).cloned();
        if let Some(slot) = slot {
            let mut held = slot.session.lock().await;
            if held.as_ref().is_some_and(|s| Arc::strong_count(s) == 1) {
                *held = None;
            }
        }
    }

    /// The scope's slot; past the cap on sessions, the least recently used idle one is closed.
    fn slot(&self, scope: &str) -> Result<Arc<Slot>, ToolFailure> {
        let mut slots = lock(&self.slots);
        if let Some(slot) = slots.get(scope) {
            return Ok(slot.clone());
        }
        if slots.len() > MAX_SESSIONS_PER_SERVER {
            let idle = slots
                .iter()
                .filter(|(scope, slot)| scope.as_str() != SHARED_SCOPE && slot.is_idle())
                .min_by_key(|(_, slot)| *lock(&slot.last_used))
                .map(|(scope, _)| scope.clone());
            match idle {
                // Dropping the slot's session ends it (a child process is stopped).
                Some(oldest) => drop(slots.remove(&oldest)),
                None => {
                    return Err(unavailable(format!(
                        "MCP server {} has {MAX_SESSIONS_PER_SERVER} sessions busy; try again",
                        self.name
                    )));
                }
            }
        }
        let slot = Arc::new(Slot::default());
        slots.insert(scope.to_owned(), slot.clone());
        Ok(slot)
    }

    /// Closes the sessions of keys that have not used them for `idle` (the shared one, which
    /// lists the tools, stays).
    pub(crate) fn close_idle(&self, idle: Duration) {
        let mut slots = lock(&self.slots);
        slots.retain(|scope, slot| {
            let recent = lock(&slot.last_used).is_none_or(|at| at.elapsed() < idle);
            scope.as_str() == SHARED_SCOPE || recent || !slot.is_idle()
        });
    }

    /// Ends every session at once: each server is asked to stop (stdin closed, then SIGTERM)
    /// and, past [`CLOSE_BUDGET`], killed with its process group.
    pub(crate) async fn close_all(&self) {
        let slots: Vec<_> = lock(&self.slots).drain().map(|(_, slot)| slot).collect();
        let mut sessions = Vec::new();
        for slot in slots {
            sessions.extend(slot.session.lock().await.take().and_then(Arc::into_inner));
        }
        let closing = sessions.into_iter().map(|session| session.service.cancel());
        // Past the budget the remaining closes are dropped, which kills their children.
        let _ = tokio::time::timeout(CLOSE_BUDGET, futures_util::future::join_all(closing)).await;
    }
}

/// Receives a session's notifications: a changed tool list is listed again, into that
/// session's own catalog (the server's, for the shared session), so one key's session never
/// rewrites what the others see.
#[derive(Clone)]
pub(crate) struct Listener {
    server: String,
    config: Arc<McpServerConfig>,
    catalog: SharedCatalog,
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("sluice", env!("CARGO_PKG_VERSION")))
    }

    fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) -> impl Future<Output = ()> + Send + '_ {
        // Listed on a task of its own: the answer arrives through the loop that called us.
        let listener = self.clone();
        tokio::spawn(async move {
            match tokio::time::timeout(STARTUP_TIMEOUT, context.peer.list_all_tools()).await {
                Ok(Ok(listed)) => {
                    let catalog = catalog_of(&listener.server, &listener.config, &listed);
                    tracing::info!(server = %listener.server, tools = catalog.tools.len(), "MCP tool list changed");
                    *listener.catalog.write().unwrap_or_else(|p| p.into_inner()) = Some(catalog);
                }
                Ok(Err(e)) => tracing::warn!(server = %listener.server, error = %e, "could not list changed tools"),
                Err(_) => tracing::warn!(server = %listener.server, "listing changed tools timed out"),
            }
        });
        std::future::ready(())
    }
}

/// Starting a session: a child process over stdio, or a streamable-HTTP connection.
mod starting {
    use super::Listener;
    use crate::tools::mcp::McpServerConfig;
    use crate::tools::mcp::config::Transport;
    use rmcp::service::RunningService;
    use rmcp::{RoleClient, ServiceExt};

    /// Of Sluice's environment, only these reach a stdio server (its API keys stay behind).
    const INHERITED_ENV: [&str; 6] = ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ"];
    /// Longest line of a server's stderr that is logged.
    const MAX_LOGGED_LINE: usize = 1000;

    pub(super) async fn connect(
        name: &str,
        config: &McpServerConfig,
        listener: Listener,
    ) -> Result<RunningService<RoleClient, Listener>, String> {
        match config.transport() {
            Transport::Stdio { command: program } => {
                let mut command = tokio::process::Command::new(&program);
                command.args(&config.args).env_clear();
                for key in INHERITED_ENV {
                    if let Some(value) = std::env::var_os(key) {
                        command.env(key, value);
                    }
                }
                command.envs(&config.env);
                if let Some(dir) = &config.cwd {
                    command.current_dir(dir);
                }
                // A group of its own: ending the session ends what the server started too
                // (`npx` runs the server as a grandchild).
                let mut wrapped = process_wrap::tokio::CommandWrap::from(command);
                wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
                let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(wrapped)
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|e| format!("MCP server {name}: cannot start {program:?}: {e}"))?;
                if let Some(stderr) = stderr {
                    tokio::spawn(log_stderr(name.to_owned(), stderr));
                }
                listener.serve(transport).await.map_err(|e| format!("MCP server {name} did not start: {e}"))
            }
            Transport::Http { url } => {
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                // rmcp's HTTP client has rustls without a provider: ring, already in the tree.
                let _ = rustls::crypto::ring::default_provider().install_default();
                let mut transport = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                let mut headers = std::collections::HashMap::new();
                for (header, value) in &config.headers {
                    match value.strip_prefix("Bearer ") {
                        Some(token) if header.eq_ignore_ascii_case("authorization") => {
                            transport = transport.auth_header(token);
                        }
                        _ => {
                            let header = axum::http::HeaderName::try_from(header.as_str())
                                .map_err(|e| format!("MCP server {name}: header {header:?}: {e}"))?;
                            let value = axum::http::HeaderValue::try_from(value.as_str())
                                .map_err(|e| format!("MCP server {name}: header {header}: {e}"))?;
                            headers.insert(header, value);
                        }
                    }
                }
                let transport =
                    rmcp::transport::StreamableHttpClientTransport::from_config(transport.custom_headers(headers));
                listener.serve(transport).await.map_err(|e| format!("MCP server {name} at {url}: {e}"))
            }
        }
    }

    /// A stdio server's stderr, line by line into the log (read, so the child never blocks
    /// on a full pipe); a line is kept to [`MAX_LOGGED_LINE`] bytes as it is read, however
    /// long the server makes it.
    async fn log_stderr(name: String, stderr: tokio::process::ChildStderr) {
        use tokio::io::AsyncBufReadExt;
        let mut reader = tokio::io::BufReader::new(stderr);
        let mut line = Vec::with_capacity(MAX_LOGGED_LINE);
        loop {
            let Ok(buffer) = reader.fill_buf().await else { return };
            if buffer.is_empty() {
                return;
            }
            let (chunk, ends_line) = match buffer.iter().position(|&b| b == b'\n') {
                Some(end) => (&buffer[..end], true),
                None => (buffer, false),
            };
            let room = MAX_LOGGED_LINE.saturating_sub(line.len());
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            let used = chunk.len() + usize::from(ends_line);
            reader.consume(used);
            if ends_line {
                tracing::debug!(server = %name, "{}", String::from_utf8_lossy(&line));
                line.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Arc<Server> {
        Server::new("s".into(), serde_json::from_value(serde_json::json!({"command": "x"})).unwrap())
    }

    fn scopes(server: &Server) -> Vec<String> {
        let mut scopes: Vec<String> = lock(&server.slots).keys().cloned().collect();
        scopes.sort();
        scopes
    }

    #[test]
    fn idle_sessions_close_while_busy_recent_and_shared_ones_stay() {
        let server = server();
        let Some(long_ago) = Instant::now().checked_sub(Duration::from_secs(3600)) else { return };
        for scope in [SHARED_SCOPE, "idle", "busy", "recent"] {
            let slot = server.slot(scope).unwrap();
            *lock(&slot.last_used) = Some(if scope == "recent" { Instant::now() } else { long_ago });
        }
        let busy = server.slot("busy").unwrap();
        let _in_use = busy.session.try_lock().unwrap();
        server.close_idle(Duration::from_secs(60));
        assert_eq!(scopes(&server), ["", "busy", "recent"]);
    }

    #[test]
    fn past_the_cap_the_least_recently_used_idle_session_makes_room() {
        let server = server();
        for n in 0..MAX_SESSIONS_PER_SERVER {
            let slot = server.slot(&format!("key_{n}")).unwrap();
            *lock(&slot.last_used) = Some(Instant::now());
        }
        let oldest = server.slot("key_0").unwrap();
        *lock(&oldest.last_used) = Instant::now().checked_sub(Duration::from_secs(1));
        server.slot("newcomer").unwrap();
        let now = scopes(&server);
        assert!(!now.contains(&"key_0".to_owned()) && now.contains(&"newcomer".to_owned()));
        assert_eq!(now.len(), MAX_SESSIONS_PER_SERVER + 1, "the keys' sessions and the shared one");

        // Every session busy: a new key is told to try again rather than evicting one in use.
        let held: Vec<_> = now.iter().map(|scope| server.slot(scope).unwrap()).collect();
        let _guards: Vec<_> = held.iter().map(|slot| slot.session.try_lock().unwrap()).collect();
        assert_eq!(server.slot("late").err().map(|f| f.code), Some(FailureCode::Unavailable));
    }
}
