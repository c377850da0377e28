//! The `mcp` executor: tools of the operator's MCP servers, callable from code as `NAME__TOOL`.
//!
//! Each configured server is reached over stdio (a child process Sluice starts, with a clean
//! environment) or streamable HTTP. Its tools become Sluice tools that pass the same gate and
//! ledger as any other; their list follows the server's `notifications/tools/list_changed`.
//! A session that dies is started again by the next call that needs it; a server that does
//! not answer in time is `unavailable` to the script, never a hang. Sessions are per API key
//! unless the operator marks a server `shared`.

mod config;
mod session;

pub use config::{McpConfig, McpServerConfig, SessionIsolation};

use crate::call::{FailureCode, ToolFailure};
use crate::tools::{Executor, SideEffects, Tool, ToolDefinition};
use serde_json::{Map, Value};
use session::{Catalog, Server};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// A call that gets no answer in this long (unless the server or tool says otherwise) is
/// `unavailable` to the script.
pub(crate) const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Starting a server and its MCP handshake (a stdio server may first install itself, as
/// `npx` and `uvx` do).
pub(crate) const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// How long starting waits for the servers' first listings (a slow `npx` install goes on in
/// the background; its tools appear when it is done).
pub(crate) const INITIAL_LISTING_WAIT: Duration = Duration::from_secs(20);
/// Largest result text taken from a server (the same bound as an `http` tool's body).
pub(crate) const MAX_RESULT_BYTES: usize = crate::tools::http::MAX_RESULT_BYTES;
/// Tools kept of one server's list (the rest are left out, with a warning).
pub(crate) const MAX_TOOLS_PER_SERVER: usize = 1_000;
/// Sessions one server may have open at once (one per API key that used it, LRU beyond).
pub(crate) const MAX_SESSIONS_PER_SERVER: usize = 64;
/// A key's session unused this long is closed (its process stopped); the next call starts
/// another.
pub(crate) const SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// How often idle sessions are looked for.
const IDLE_SWEEP_INTERVAL: Duration = Duration::from_secs(30);
/// After a failed start, the next attempt waits this long (a broken command is not run in a
/// loop by every call).
pub(crate) const RESTART_BACKOFF: Duration = Duration::from_secs(1);

/// The operator's MCP servers and their tools. Cheap to clone; empty when none is configured.
#[derive(Debug, Clone, Default)]
pub struct McpServers {
    servers: Arc<BTreeMap<String, Arc<Server>>>,
}

impl McpServers {
    /// Connects to every configured server and lists its tools, waiting at most
    /// [`INITIAL_LISTING_WAIT`] for them all; slower ones go on in the background. A server
    /// that cannot be reached is logged and tried again later; it stops neither the others
    /// nor the service.
    pub async fn start(config: McpConfig) -> Self {
        let servers: BTreeMap<String, Arc<Server>> =
            config.mcp_servers.into_iter().map(|(name, config)| (name.clone(), Server::new(name, config))).collect();
        let listings = servers.values().filter_map(|server| server.list_in_background());
        let _ = tokio::time::timeout(INITIAL_LISTING_WAIT, futures_util::future::join_all(listings)).await;
        let servers = Arc::new(servers);
        // Closes idle sessions while the servers are in use; ends when they are dropped.
        let weak = Arc::downgrade(&servers);
        tokio::spawn(async move {
            let mut sweep = tokio::time::interval(IDLE_SWEEP_INTERVAL);
            sweep.tick().await;
            loop {
                sweep.tick().await;
                let Some(servers) = weak.upgrade() else { return };
                servers.values().for_each(|server| server.close_idle(SESSION_IDLE_TIMEOUT));
            }
        });
        Self { servers }
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Every tool the servers offer `owner` now (what every key sees when `None`), as Sluice
    /// tools by name; where two servers' tools get one Sluice name, the first server's wins. A
    /// server whose list is unknown (it could not be reached) is asked again in the background.
    pub fn tools(&self, owner: Option<&str>) -> Vec<Arc<Tool>> {
        let mut by_name: BTreeMap<String, Arc<Tool>> = BTreeMap::new();
        for tool in self.servers.values().flat_map(|server| server.tools(owner)) {
            if let Some(first) = by_name.get(tool.name()) {
                tracing::debug!(tool = tool.name(), kept = ?first.definition.executor, "two MCP tools share a name");
                continue;
            }
            by_name.insert(tool.name().to_owned(), tool);
        }
        by_name.into_values().collect()
    }

    pub fn get(&self, owner: Option<&str>, name: &str) -> Option<Arc<Tool>> {
        self.servers.values().find_map(|server| server.tool(owner, name))
    }

    /// Calls `tool` of `server` for `owner` (whose session it uses, unless the server is
    /// shared) within `timeout` (the server's or [`DEFAULT_CALL_TIMEOUT`] when `None`), and
    /// turns its result into the text the script receives.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        input: &Map<String, Value>,
        owner: &str,
        timeout: Option<Duration>,
    ) -> Result<String, ToolFailure> {
        let Some(state) = self.servers.get(server) else {
            return Err(ToolFailure::new(FailureCode::Unavailable, format!("there is no MCP server named {server:?}")));
        };
        state.call(tool, input, owner, timeout).await
    }

    /// Ends every session (children are stopped).
    pub async fn shutdown(&self) {
        futures_util::future::join_all(self.servers.values().map(|server| server.close_all())).await;
    }
}

/// `NAME__TOOL` as a Python identifier and a Sluice tool name: characters outside
/// `[A-Za-z0-9_]` become `_`, a leading digit gets a `_` before it, and a name past the
/// limit keeps its start and a hash of the whole (so two long names stay apart).
pub(crate) fn sluice_name(server: &str, tool: &str) -> String {
    let joined = format!("{server}__{tool}");
    let mut name: String =
        joined.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    if name.len() > crate::tools::MAX_TOOL_NAME_LEN {
        use sha2::Digest;
        let digest = crate::call::hex(&sha2::Sha256::digest(joined.as_bytes())[..4]);
        name.truncate(crate::tools::MAX_TOOL_NAME_LEN - digest.len() - 1);
        name = format!("{name}_{digest}");
    }
    name
}

/// The Sluice tool for one of `server`'s tools: its schema and description, the operator's
/// callers, and side effects from the configuration or else the tool's annotations.
fn sluice_tool(server: &str, config: &McpServerConfig, tool: &rmcp::model::Tool) -> Result<Arc<Tool>, String> {
    let annotations = tool.annotations.as_ref();
    let side_effects = config.side_effects.unwrap_or(match annotations {
        Some(a) if a.read_only_hint == Some(true) => SideEffects::ReadOnly,
        Some(a) if a.idempotent_hint == Some(true) => SideEffects::Idempotent,
        _ => SideEffects::Write,
    });
    // A long description is cut, not refused: the tool stays usable.
    let description = tool
        .description
        .as_deref()
        .map(|text| text[..text.floor_char_boundary(crate::tools::MAX_DESCRIPTION_BYTES)].to_owned());
    let definition = ToolDefinition {
        description,
        input_schema: Value::Object((*tool.input_schema).clone()),
        allowed_callers: config.allowed_callers.clone(),
        executor: Executor::Mcp { server: server.to_owned(), tool: tool.name.to_string() },
        side_effects,
        timeout_ms: config.timeout_ms,
        defer_loading: config.defer_loading,
        requires_approval: config.requires_approval,
        ..ToolDefinition::code_callable(sluice_name(server, &tool.name))
    };
    Tool::new(definition)
}

/// The tools of a server's list that the configuration offers, named for Sluice; a tool
/// whose name collides with an earlier one, or whose schema Sluice cannot check, is left out.
fn catalog_of(server: &str, config: &McpServerConfig, listed: &[rmcp::model::Tool]) -> Catalog {
    let mut tools = BTreeMap::new();
    if listed.len() > MAX_TOOLS_PER_SERVER {
        tracing::warn!(server, listed = listed.len(), "MCP server lists more tools than are kept");
    }
    for tool in listed.iter().take(MAX_TOOLS_PER_SERVER) {
        let offered = config.allowed_tools.as_ref().is_none_or(|allowed| allowed.iter().any(|a| a == &*tool.name))
            && !config.denied_tools.iter().any(|d| d == &*tool.name);
        if !offered {
            continue;
        }
        match sluice_tool(server, config, tool) {
            Ok(made) if tools.contains_key(made.name()) => {
                tracing::warn!(server, tool = %tool.name, "left out: its Sluice name repeats another tool's");
            }
            Ok(made) => {
                tools.insert(made.name().to_owned(), made);
            }
            Err(e) => tracing::warn!(server, tool = %tool.name, error = %e, "left out"),
        }
    }
    Catalog { tools }
}

/// What the script receives from a tool's result: its text content (other content as JSON,
/// one block per line); the structured content as JSON text when there is no text; `isError`
/// as a `tool_error` failure with that text.
fn result_text(result: rmcp::model::CallToolResult) -> Result<String, ToolFailure> {
    let mut parts = Vec::with_capacity(result.content.len());
    for block in &result.content {
        match block.as_text() {
            Some(text) => parts.push(text.text.clone()),
            None => parts.push(serde_json::to_string(block).unwrap_or_default()),
        }
    }
    let text = match (parts.is_empty(), &result.structured_content) {
        (true, Some(structured)) => structured.to_string(),
        _ => parts.join("\n"),
    };
    if text.len() > MAX_RESULT_BYTES {
        return Err(ToolFailure::new(
            FailureCode::ResultTooLarge,
            format!("the result is {} bytes, more than the {MAX_RESULT_BYTES} taken from a tool", text.len()),
        ));
    }
    if result.is_error == Some(true) {
        return Err(ToolFailure::new(FailureCode::ToolError, text));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_python_identifiers_within_the_limit() {
        assert_eq!(sluice_name("time", "get_current_time"), "time__get_current_time");
        assert_eq!(sluice_name("my-db", "read.query"), "my_db__read_query");
        assert_eq!(sluice_name("9lives", "x"), "_9lives__x");
        let long = sluice_name("server", &"t".repeat(100));
        assert_eq!(long.len(), crate::tools::MAX_TOOL_NAME_LEN);
        assert_ne!(long, sluice_name("server", &"t".repeat(101)), "a hash keeps long names apart");
    }

    fn listed(name: &str, annotations: Option<rmcp::model::ToolAnnotations>) -> rmcp::model::Tool {
        let schema = serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let mut tool =
            rmcp::model::Tool::new(name.to_owned(), "does a thing", Arc::new(schema.as_object().unwrap().clone()));
        tool.annotations = annotations;
        tool
    }

    #[test]
    fn the_configuration_picks_tools_and_annotations_pick_side_effects() {
        let config: McpServerConfig =
            serde_json::from_value(serde_json::json!({"command": "x", "denied_tools": ["drop"]})).unwrap();
        let read_only = rmcp::model::ToolAnnotations::new().read_only(true);
        let tools = [listed("read", Some(read_only)), listed("write", None), listed("drop", None)];
        let catalog = catalog_of("db", &config, &tools);
        assert_eq!(catalog.tools.keys().collect::<Vec<_>>(), ["db__read", "db__write"]);
        let read = &catalog.tools["db__read"].definition;
        assert_eq!((read.side_effects, read.callable_from_code()), (SideEffects::ReadOnly, true));
        assert_eq!(read.executor, Executor::Mcp { server: "db".into(), tool: "read".into() });
        assert_eq!(catalog.tools["db__write"].definition.side_effects, SideEffects::Write);
        assert!(catalog.tools["db__write"].may_act(), "a write tool is on record before it is called");

        let only: McpServerConfig = serde_json::from_value(
            serde_json::json!({"command": "x", "allowed_tools": ["write"], "side_effects": "idempotent"}),
        )
        .unwrap();
        let catalog = catalog_of("db", &only, &tools);
        assert_eq!(catalog.tools.keys().collect::<Vec<_>>(), ["db__write"]);
        assert_eq!(catalog.tools["db__write"].definition.side_effects, SideEffects::Idempotent);
        assert!(!catalog.tools["db__write"].definition.defer_loading);

        let deferred: McpServerConfig =
            serde_json::from_value(serde_json::json!({"command": "x", "defer_loading": true})).unwrap();
        let catalog = catalog_of("db", &deferred, &tools);
        assert!(
            catalog.tools.values().all(|tool| tool.definition.defer_loading),
            "every tool of the server is deferred"
        );
    }

    #[test]
    fn results_become_text_and_errors_become_tool_errors() {
        use rmcp::model::{CallToolResult, ContentBlock};
        let two = CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
        assert_eq!(result_text(two).unwrap(), "a\nb");
        let mut structured = CallToolResult::success(Vec::new());
        structured.structured_content = Some(serde_json::json!({"n": 1}));
        assert_eq!(result_text(structured).unwrap(), r#"{"n":1}"#);
        let failed = result_text(CallToolResult::error(vec![ContentBlock::text("no such table")])).unwrap_err();
        assert_eq!((failed.code, failed.message.as_str()), (FailureCode::ToolError, "no such table"));
        let huge = CallToolResult::success(vec![ContentBlock::text("x".repeat(MAX_RESULT_BYTES + 1))]);
        assert_eq!(result_text(huge).unwrap_err().code, FailureCode::ResultTooLarge);
    }
}
