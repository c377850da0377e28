//! Sluice as an MCP server: `execute_python` and `search_tools`, over stdio (`sluice mcp`)
//! and streamable HTTP (`/mcp` on `sluice serve`, with the API's keys).
//!
//! Both run the same [`Service`] as the HTTP API, so an execution through MCP is audited,
//! limited and replayable exactly like one through `/v1/executions`. The HTTP transport is
//! stateless (no MCP sessions to own or hijack): the key of each request decides who acts.

use super::auth::Authenticated;
use super::error::ApiError;
use crate::engine::service::{ExecutionStatus, ExecutionView, NewExecution, Owner, Service};
use crate::tools::search::{MAX_PATTERN_CHARS, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, SearchRequest, search};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpTool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub(crate) const EXECUTE_PYTHON: &str = "execute_python";
pub(crate) const SEARCH_TOOLS: &str = "search_tools";

const INSTRUCTIONS: &str = "Run Python with execute_python. Variables persist between calls that pass the \
same container_id. Tools are async functions in the script's globals: `rows = json.loads(await \
db__read_query(query=\"...\"))`, several at once with asyncio.gather. Their results stay inside; only \
what the script prints (or its last expression) comes back. Find tools and their signatures with \
search_tools, or from inside a script with `await sluice.search_tools(\"...\")`.";

/// The MCP server; over stdio it acts for one owner, over HTTP for each request's key.
#[derive(Clone)]
pub(crate) struct SluiceMcp {
    service: Service,
    /// The owner of a stdio server (the host that launched it); `None` over HTTP.
    owner: Option<Owner>,
}

impl SluiceMcp {
    pub(crate) fn new(service: Service, owner: Option<Owner>) -> Self {
        Self { service, owner }
    }

    fn owner(&self, context: &RequestContext<RoleServer>) -> Result<Owner, McpError> {
        if let Some(owner) = &self.owner {
            return Ok(owner.clone());
        }
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Authenticated>())
            .map(|Authenticated(owner)| owner.clone())
            .ok_or_else(|| McpError::invalid_request("a valid API key is required", None))
    }

    async fn execute_python(&self, owner: &Owner, arguments: &Map<String, Value>) -> CallToolResult {
        let code = match arguments.get("code") {
            Some(Value::String(code)) => code.clone(),
            _ => return refusal("invalid_request_error", "`code` (a string of Python) is required"),
        };
        let container = match arguments.get("container_id") {
            None | Some(Value::Null) => None,
            Some(Value::String(id)) => match id.parse() {
                Ok(id) => Some(id),
                Err(_) => {
                    return refusal("invalid_request_error", &format!("container_id {id:?} is not a container id"));
                }
            },
            Some(_) => return refusal("invalid_request_error", "container_id must be a string"),
        };
        let request = NewExecution { code, container, server_side_tools: true, ..NewExecution::default() };
        match self.service.create_execution(owner, request).await {
            Ok(view) => execution_result(&view),
            Err(e) => {
                let error = ApiError::from(e);
                refusal(error.kind(), &error.to_string())
            }
        }
    }

    fn search_tools(&self, owner: &Owner, arguments: &Map<String, Value>) -> CallToolResult {
        let tools = self.service.server_side_tools(owner);
        let found = match SearchRequest::from_arguments(arguments).and_then(|request| search(&tools, &request)) {
            Ok(found) => found,
            Err(e) => return refusal(e.code(), &e.to_string()),
        };
        let described: Vec<Value> = found.iter().map(|hit| hit.describe()).collect();
        let text = if described.is_empty() {
            format!("no tool matches ({} tools callable from code)", tools.len())
        } else {
            let signatures: Vec<&str> = described.iter().filter_map(|d| d["signature"].as_str()).collect();
            signatures.join("\n\n")
        };
        with_structured(CallToolResult::success(vec![ContentBlock::text(text)]), json!({"tools": described}))
    }
}

fn with_structured(mut result: CallToolResult, structured: Value) -> CallToolResult {
    result.structured_content = Some(structured);
    result
}

/// A request Sluice did not run (bad arguments, a quota, an unknown container): an
/// `isError` result with the API's stable error type, which the model can act on.
fn refusal(kind: &str, message: &str) -> CallToolResult {
    let error = json!({"error": {"type": kind, "message": message}});
    with_structured(CallToolResult::error(vec![ContentBlock::text(format!("{kind}: {message}"))]), error)
}

/// What the model reads: the output, then the return code and the container to reuse; the
/// same as structured content. A failed script or a limit stop is `isError`.
fn execution_result(view: &ExecutionView) -> CallToolResult {
    let outcome = view.outcome.as_ref();
    let stdout = outcome.map_or("", |o| o.stdout.as_str());
    let stderr = outcome.map_or("", |o| o.stderr.as_str());
    let return_code = outcome.map_or(1, |o| o.return_code);
    let value = outcome.and_then(|o| o.value_repr.as_deref());
    let mut text = String::from(stdout);
    let mut section = |body: &str| {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(body);
    };
    if let Some(value) = value {
        section(value);
    }
    if !stderr.is_empty() {
        section(&format!("[stderr]\n{stderr}"));
    }
    // A limit stop is already named in stderr; an execution the host failed is not.
    if let Some(error) = view.error.as_ref().filter(|_| stderr.is_empty()) {
        section(&format!("[stopped: {}] {}", error.kind, error.message));
    }
    // Held for approval: there is no MCP way to approve (the agent must not approve its own
    // calls); a person answers over HTTP and the result is then at GET /v1/executions/{id}.
    for request in &view.approval_requests {
        section(&format!(
            "[waiting for approval: {}({}) · POST /v1/executions/{}/approvals]",
            request.name,
            Value::Object((*request.input).clone()),
            view.id
        ));
    }
    if view.status == ExecutionStatus::RequiresAction {
        section(&format!("[waiting · execution_id {} · container_id {}]", view.id, view.container_id));
    } else {
        section(&format!("[return code {return_code} · container_id {}]", view.container_id));
    }
    let mut structured = json!({
        "execution_id": view.id,
        "container_id": view.container_id.to_string(),
        "status": view.status,
        "stdout": stdout,
        "stderr": stderr,
        "return_code": return_code,
    });
    if let Some(value) = value {
        structured["value"] = json!(value);
    }
    if let Some(error) = &view.error {
        structured["error"] = json!({"type": error.kind, "message": error.message});
    }
    if !view.approval_requests.is_empty() {
        structured["approval_requests"] = json!(view.approval_requests);
    }
    let failed = match view.status {
        ExecutionStatus::RequiresAction => false,
        ExecutionStatus::Completed => return_code != 0,
        _ => true,
    };
    let content = vec![ContentBlock::text(text)];
    let result = if failed { CallToolResult::error(content) } else { CallToolResult::success(content) };
    with_structured(result, structured)
}

fn object_schema(schema: Value) -> Arc<Map<String, Value>> {
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("written as an object below"),
    }
}

/// The tools this server offers.
fn offered_tools() -> Vec<McpTool> {
    let execute = McpTool::new(
        EXECUTE_PYTHON,
        "Run Python in a persistent sandbox. Pass the returned container_id to keep variables between \
         calls. Tools found with search_tools are async functions in the script's globals; only what the \
         script prints (or its last expression) is returned.",
        object_schema(json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "The Python to run."},
                "container_id": {"type": "string", "description": "A container from an earlier call, to reuse its state."}
            },
            "required": ["code"]
        })),
    );
    let search = McpTool::new(
        SEARCH_TOOLS,
        "Find the tools code can call, each as the Python signature to call it by.",
        object_schema(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "maxLength": MAX_QUERY_CHARS,
                          "description": "What the tool should do, in a few words."},
                "pattern": {"type": "string", "maxLength": MAX_PATTERN_CHARS,
                            "description": "Instead of a query: a case-insensitive regular expression over names, descriptions and parameters."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT, "description": "Tools to return (default 5)."}
            }
        })),
    );
    vec![execute, search]
}

impl ServerHandler for SluiceMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("sluice", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(offered_tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let owner = self.owner(&context)?;
        let arguments = request.arguments.unwrap_or_default();
        let result = match &*request.name {
            EXECUTE_PYTHON => self.execute_python(&owner, &arguments).await,
            SEARCH_TOOLS => self.search_tools(&owner, &arguments),
            other => return Err(McpError::invalid_params(format!("there is no tool named {other:?}"), None)),
        };
        Ok(result.into())
    }
}

/// `/mcp`: streamable HTTP, stateless, JSON answers. `allowed_hosts` guards against DNS
/// rebinding when no API key is required (empty: any `Host`).
pub(crate) fn http_service(
    service: Service,
    allowed_hosts: Vec<String>,
) -> StreamableHttpService<SluiceMcp, NeverSessionManager> {
    let mut config = StreamableHttpServerConfig::default().with_allowed_hosts(allowed_hosts);
    config.legacy_session_mode = false;
    config.json_response = true;
    config.sse_keep_alive = None;
    StreamableHttpService::new(move || Ok(SluiceMcp::new(service.clone(), None)), Default::default(), config)
}

/// `sluice mcp`: serves the host that launched it over stdin and stdout until it hangs up.
pub(crate) async fn serve_stdio(service: Service, owner: Owner) -> Result<(), String> {
    let running = SluiceMcp::new(service, Some(owner))
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("MCP handshake over stdio failed: {e}"))?;
    running.waiting().await.map_err(|e| format!("MCP over stdio ended: {e}"))?;
    Ok(())
}
