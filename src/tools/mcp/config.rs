//! The operator's MCP configuration: Claude Desktop's `{"mcpServers": {...}}` shape, plus
//! Sluice's own fields per server (who may call its tools, what they may change, which of
//! them are offered, and whether each API key gets a session of its own).

use crate::tools::{AllowedCaller, MAX_TOOL_TIMEOUT_MS, SideEffects};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Servers one configuration may name.
pub(crate) const MAX_SERVERS: usize = 64;
/// Longest server name: `NAME__TOOL` must still fit a tool name.
pub(crate) const MAX_SERVER_NAME_LEN: usize = 32;

/// What `--mcp-config` names.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpConfig {
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
}

/// One server: a command Sluice starts (stdio) or a URL it connects to (streamable HTTP).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program of a stdio server.
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// The stdio server's environment, besides `PATH`, `HOME` and `LANG` (nothing else of
    /// Sluice's environment, where API keys live, reaches it).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The working directory of a stdio server.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The endpoint of a streamable-HTTP server.
    #[serde(default)]
    pub url: Option<String>,
    /// Headers sent with every request to `url` (an `Authorization` for the server, say).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Accepted for Claude Desktop's shape (`"stdio"`, `"http"`, `"streamable-http"`); the
    /// transport follows from `command` or `url`.
    #[serde(default, rename = "type")]
    pub transport: Option<String>,
    /// Who may call the server's tools (default: code execution).
    #[serde(default = "code_execution_only")]
    pub allowed_callers: Vec<AllowedCaller>,
    /// What every tool of the server may change; without it, each tool's annotations
    /// (`readOnlyHint`, `idempotentHint`) decide, and `write` when it has none.
    #[serde(default)]
    pub side_effects: Option<SideEffects>,
    /// Whether calls from code to the server's tools wait for a person's approval; without
    /// it, a `write` tool does and the others do not (the approval policy can still decide).
    #[serde(default)]
    pub requires_approval: Option<bool>,
    /// Only these tools (by the server's names) are offered.
    #[serde(default)]
    pub allowed_tools: Option<Vec<String>>,
    /// These tools (by the server's names) are never offered.
    #[serde(default)]
    pub denied_tools: Vec<String>,
    /// Every tool of the server is `defer_loading`: callable from code and found by tool
    /// search, but left out of listings (for a server with many tools).
    #[serde(default)]
    pub defer_loading: bool,
    /// How long a call may take before the script gets `ToolUnavailableError`.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// `per_key` (default): each API key talks to a session (a process, for stdio) of its
    /// own, so what one key keeps in a server's memory another cannot read (state the server
    /// keeps in files needs `${SLUICE_OWNER}` in its path). `shared`: one session for every
    /// key, for servers without per-caller state.
    #[serde(default)]
    pub isolation: SessionIsolation,
}

/// Whether API keys share a server's session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionIsolation {
    #[default]
    PerKey,
    Shared,
}

fn code_execution_only() -> Vec<AllowedCaller> {
    vec![AllowedCaller::CodeExecution20260120]
}

/// How a server is reached, once its configuration is checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Transport {
    Stdio { command: String },
    Http { url: String },
}

/// Replaced, in a server's `args`, `env` values, `cwd` and `headers` values, by the API key's
/// owner id (`key_...`, `anonymous`; `shared` in a shared session): a server that keeps state
/// in files gets a file per key.
pub(crate) const OWNER_PLACEHOLDER: &str = "${SLUICE_OWNER}";

impl McpServerConfig {
    /// This configuration for `owner`'s session, [`OWNER_PLACEHOLDER`] replaced.
    pub(crate) fn for_owner(&self, owner: &str) -> Self {
        let fill = |text: &String| text.replace(OWNER_PLACEHOLDER, owner);
        Self {
            args: self.args.iter().map(fill).collect(),
            env: self.env.iter().map(|(k, v)| (k.clone(), fill(v))).collect(),
            cwd: self.cwd.as_ref().map(fill),
            headers: self.headers.iter().map(|(k, v)| (k.clone(), fill(v))).collect(),
            ..self.clone()
        }
    }

    pub(crate) fn transport(&self) -> Transport {
        match (&self.command, &self.url) {
            (Some(command), _) => Transport::Stdio { command: command.clone() },
            (None, Some(url)) => Transport::Http { url: url.clone() },
            (None, None) => unreachable!("checked by McpConfig::validate"),
        }
    }
}

impl McpConfig {
    /// Reads and checks `path`; every mistake names the server and the field.
    pub fn from_file(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn from_json(text: &str) -> Result<Self, String> {
        let config: Self = serde_json::from_str(text).map_err(|e| format!("not an MCP configuration: {e}"))?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), String> {
        if self.mcp_servers.len() > MAX_SERVERS {
            return Err(format!("at most {MAX_SERVERS} MCP servers"));
        }
        for (name, server) in &self.mcp_servers {
            let name_ok = !name.is_empty()
                && name.len() <= MAX_SERVER_NAME_LEN
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !name_ok {
                return Err(format!("server name {name:?} must match ^[a-zA-Z0-9_-]{{1,{MAX_SERVER_NAME_LEN}}}$"));
            }
            match (&server.command, &server.url) {
                (Some(_), Some(_)) => return Err(format!("server {name}: give `command` or `url`, not both")),
                (None, None) => return Err(format!("server {name}: needs `command` (stdio) or `url` (HTTP)")),
                (Some(command), None) if command.trim().is_empty() => {
                    return Err(format!("server {name}: `command` is empty"));
                }
                (None, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                    return Err(format!("server {name}: `url` must be an http:// or https:// URL"));
                }
                _ => {}
            }
            if server.allowed_callers.is_empty() {
                return Err(format!("server {name}: `allowed_callers` must not be empty"));
            }
            if server.timeout_ms.is_some_and(|t| t == 0 || t > MAX_TOOL_TIMEOUT_MS) {
                return Err(format!("server {name}: `timeout_ms` must be within 1..={MAX_TOOL_TIMEOUT_MS}"));
            }
            for header in server.headers.keys() {
                if axum::http::HeaderName::try_from(header.as_str()).is_err() {
                    return Err(format!("server {name}: {header:?} is not a header name"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_desktops_shape_is_read_with_sluices_fields() {
        let config = McpConfig::from_json(
            r#"{"mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
                "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"},
                           "side_effects": "read_only", "denied_tools": ["drop"], "isolation": "shared"}
            }}"#,
        )
        .unwrap();
        let time = &config.mcp_servers["time"];
        assert_eq!(time.transport(), Transport::Stdio { command: "uvx".into() });
        assert_eq!(time.isolation, SessionIsolation::PerKey);
        assert_eq!(time.allowed_callers, vec![AllowedCaller::CodeExecution20260120]);
        let filled = time.for_owner("key_1");
        assert_eq!(filled.args, ["mcp-server-time"]);
        let with_file: McpServerConfig =
            serde_json::from_value(serde_json::json!({"command": "x", "args": ["--db", "/d/${SLUICE_OWNER}.db"]}))
                .unwrap();
        assert_eq!(with_file.for_owner("key_1").args, ["--db", "/d/key_1.db"]);
        let remote = &config.mcp_servers["remote"];
        assert_eq!(remote.transport(), Transport::Http { url: "https://example.com/mcp".into() });
        assert_eq!((remote.side_effects, remote.isolation), (Some(SideEffects::ReadOnly), SessionIsolation::Shared));
    }

    #[test]
    fn mistakes_name_the_server_and_the_field() {
        for (text, expected) in [
            (r#"{"mcpServers": {"a": {}}}"#, "server a: needs `command`"),
            (r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#, "not both"),
            (r#"{"mcpServers": {"a": {"url": "ftp://h"}}}"#, "http:// or https://"),
            (r#"{"mcpServers": {"a b": {"command": "x"}}}"#, "server name \"a b\""),
            (r#"{"mcpServers": {"a": {"command": "x", "timeout_ms": 0}}}"#, "timeout_ms"),
            (r#"{"mcpServers": {"a": {"command": "x", "comand": "y"}}}"#, "unknown field"),
        ] {
            let err = McpConfig::from_json(text).unwrap_err();
            assert!(err.contains(expected), "{text}: {err}");
        }
    }
}
