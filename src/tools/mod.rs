//! Tool definitions (Anthropic's fields plus ours) and the gate every call from code passes.
//!
//! The gate asks, in order: is the tool known, may code call it, is its quota left, are the
//! arguments valid against `input_schema` after safe coercion? Each refusal is a
//! [`ToolFailure`] with a stable code that the script sees as the matching `sluice`
//! exception. Tools know nothing of wasm: the engine feeds them calls.

pub(crate) mod approval;
pub(crate) mod egress;
pub(crate) mod http;
pub(crate) mod mcp;
pub(crate) mod preview;
pub(crate) mod registry;
pub(crate) mod schema;
pub(crate) mod search;

use crate::call::{FailureCode, GuestTool, ToolFailure};
use approval::{ApprovalPolicy, RuleDecision};
use schema::InputSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

pub(crate) const MAX_TOOL_NAME_LEN: usize = 64;
/// Longest tool description kept.
pub(crate) const MAX_DESCRIPTION_BYTES: usize = 16 << 10;
/// Largest tool timeout a definition may ask for.
pub(crate) const MAX_TOOL_TIMEOUT_MS: u64 = 600_000;

/// Who may call a tool, as in Anthropic's `allowed_callers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AllowedCaller {
    #[serde(rename = "direct")]
    Direct,
    #[serde(rename = "code_execution_20250825")]
    CodeExecution20250825,
    #[serde(rename = "code_execution_20260120")]
    CodeExecution20260120,
    #[serde(rename = "code_execution_20260521")]
    CodeExecution20260521,
}

impl AllowedCaller {
    pub fn is_code_execution(self) -> bool {
        !matches!(self, AllowedCaller::Direct)
    }
}

/// How a call is carried out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Executor {
    /// Returned to the API caller as a `tool_use` block.
    #[default]
    Client,
    /// The service POSTs the arguments to `url`.
    Http { url: String },
    /// A tool of one of the operator's MCP servers (`tool` is the server's name for it).
    /// Only the operator's configuration makes these; clients cannot.
    Mcp { server: String, tool: String },
}

impl Executor {
    /// Whether the service itself carries out calls (rather than the API caller).
    pub fn is_server_side(&self) -> bool {
        !matches!(self, Executor::Client)
    }

    /// The executor's name, as views, previews and traces show it.
    pub fn kind(&self) -> &'static str {
        match self {
            Executor::Client => "client",
            Executor::Http { .. } => "http",
            Executor::Mcp { .. } => "mcp",
        }
    }
}

/// What calling the tool may change, which decides whether a failed call may be retried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SideEffects {
    ReadOnly,
    Idempotent,
    #[default]
    Write,
}

fn direct_only() -> Vec<AllowedCaller> {
    vec![AllowedCaller::Direct]
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

/// A tool definition: Anthropic's fields, then Sluice's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolDefinition {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_examples: Vec<Value>,
    #[serde(default = "direct_only")]
    pub allowed_callers: Vec<AllowedCaller>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defer_loading: bool,
    /// Accepted for compatibility with Anthropic tool definitions; not used.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Accepted for compatibility with Anthropic tool definitions (fine-grained streaming of
    /// a direct call's input); nothing streams here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eager_input_streaming: Option<bool>,
    #[serde(default)]
    pub executor: Executor,
    #[serde(default)]
    pub side_effects: SideEffects,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Calls one execution may make to this tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_calls_per_execution: Option<u64>,
    /// How the audit trail keeps this tool's results.
    #[serde(default, skip_serializing_if = "ResultStorage::is_text")]
    pub result_storage: ResultStorage,
    /// Whether a call from code waits for a person's approval (`POST
    /// /v1/executions/{id}/approvals`). Unset: yes for a tool the service carries out that may
    /// change something (`http` or `mcp`, `side_effects: "write"`), no otherwise: a `client`
    /// tool is already the caller's to run or refuse. The operator's policy has the last word.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_approval: Option<bool>,
}

/// Whether the audit trail keeps a tool's results as text (replayable) or only their hash
/// and size (for results that must not be stored; such executions cannot be replayed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultStorage {
    #[default]
    Text,
    Hash,
}

impl ResultStorage {
    fn is_text(&self) -> bool {
        *self == ResultStorage::Text
    }
}

impl ToolDefinition {
    /// A client tool callable from code, with an open object schema.
    pub fn code_callable(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: None,
            input_schema: empty_object_schema(),
            input_examples: Vec::new(),
            allowed_callers: vec![AllowedCaller::CodeExecution20260120],
            defer_loading: false,
            kind: None,
            cache_control: None,
            strict: None,
            eager_input_streaming: None,
            executor: Executor::Client,
            side_effects: SideEffects::default(),
            timeout_ms: None,
            max_calls_per_execution: None,
            result_storage: ResultStorage::Text,
            requires_approval: None,
        }
    }

    /// Whether calls wait for approval when no policy rule decides them (see
    /// [`ToolDefinition::requires_approval`]).
    pub fn needs_approval(&self) -> bool {
        self.requires_approval.unwrap_or_else(|| self.acts_when_called())
    }

    /// Whether the service itself carrying out a call may change something outside (an `http`
    /// or `mcp` tool that is not `read_only` or `idempotent`).
    pub fn acts_when_called(&self) -> bool {
        self.executor.is_server_side() && self.side_effects == SideEffects::Write
    }

    pub fn callable_from_code(&self) -> bool {
        self.allowed_callers.iter().any(|c| c.is_code_execution())
    }

    /// Checks the name and the shape of the definition itself.
    pub fn validate(&self) -> Result<(), String> {
        let name_ok = !self.name.is_empty()
            && self.name.len() <= MAX_TOOL_NAME_LEN
            && self.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !name_ok {
            return Err(format!("tool name {:?} must match ^[a-zA-Z0-9_-]{{1,64}}$", self.name));
        }
        if !self.input_schema.is_object() {
            return Err(format!("input_schema of {} must be a JSON object", self.name));
        }
        if self.allowed_callers.is_empty() {
            return Err(format!("allowed_callers of {} must not be empty", self.name));
        }
        if self.strict == Some(true) && self.callable_from_code() {
            return Err(format!(
                "tool {}: strict is not supported on a tool callable from code (as with Anthropic)",
                self.name
            ));
        }
        if self.description.as_ref().is_some_and(|d| d.len() > MAX_DESCRIPTION_BYTES) {
            return Err(format!("description of {} is longer than {MAX_DESCRIPTION_BYTES} bytes", self.name));
        }
        if self.timeout_ms.is_some_and(|t| t == 0 || t > MAX_TOOL_TIMEOUT_MS) {
            return Err(format!("timeout_ms of {} must be within 1..={MAX_TOOL_TIMEOUT_MS}", self.name));
        }
        if let Executor::Http { url } = &self.executor
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(format!("executor url of {} must be an http:// or https:// URL", self.name));
        }
        for (what, value) in [("input_schema", &self.input_schema)]
            .into_iter()
            .chain(self.input_examples.iter().map(|example| ("input_examples", example)))
        {
            crate::json::check_depth(&format!("{what} of {}", self.name), value)?;
        }
        if let Some(cache_control) = &self.cache_control {
            crate::json::check_depth(&format!("cache_control of {}", self.name), cache_control)?;
        }
        Ok(())
    }

    /// The call timeout the definition asks for, if any (each executor has its default).
    pub fn timeout(&self) -> Option<std::time::Duration> {
        self.timeout_ms.map(std::time::Duration::from_millis)
    }

    /// Property names in schema order: positional arguments bind to them.
    pub fn params(&self) -> Vec<String> {
        self.input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| props.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// How the guest exposes the tool (see [`GuestTool::answered_in_place`]).
    pub fn guest_tool(&self, answered_in_place: bool) -> GuestTool {
        GuestTool {
            name: self.name.clone(),
            params: self.params(),
            description: self.description.clone(),
            answered_in_place,
        }
    }
}

/// A definition checked and ready to gate calls: its schema is compiled once.
#[derive(Debug)]
pub struct Tool {
    pub definition: ToolDefinition,
    schema: InputSchema,
}

impl Tool {
    pub fn new(definition: ToolDefinition) -> Result<Arc<Self>, String> {
        definition.validate()?;
        let schema =
            InputSchema::compile(&definition.input_schema).map_err(|e| format!("tool {}: {e}", definition.name))?;
        Ok(Arc::new(Self { definition, schema }))
    }

    pub fn name(&self) -> &str {
        &self.definition.name
    }

    /// Whether dispatching a call may change something outside: a tool the service calls
    /// (`http`, `mcp`) that is not `read_only` or `idempotent`. Such calls are recorded before
    /// they are made.
    pub fn may_act(&self) -> bool {
        self.definition.acts_when_called()
    }
}

/// A call the gate let through: the tool, and whether its arguments were coerced.
#[derive(Debug, Clone)]
pub struct Admission {
    pub tool: Arc<Tool>,
    pub coerced: bool,
}

/// The tools of one execution, and how many calls each has had.
#[derive(Debug, Clone, Default)]
pub struct Toolset {
    tools: BTreeMap<String, Arc<Tool>>,
    calls: BTreeMap<String, u64>,
}

impl Toolset {
    pub fn new(tools: impl IntoIterator<Item = Arc<Tool>>) -> Self {
        Self { tools: tools.into_iter().map(|t| (t.name().to_owned(), t)).collect(), calls: BTreeMap::new() }
    }

    /// From plain definitions (the CLI and tests); each is checked.
    pub fn from_definitions(definitions: impl IntoIterator<Item = ToolDefinition>) -> Result<Self, String> {
        definitions.into_iter().map(Tool::new).collect::<Result<Vec<_>, _>>().map(Self::new)
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Tool>> {
        self.tools.get(name)
    }

    /// Calls each tool has had in this execution (saved with a paused execution, so that
    /// `max_calls_per_execution` holds across a restore or a move to another node).
    pub fn calls(&self) -> &BTreeMap<String, u64> {
        &self.calls
    }

    /// Calls this execution has made to `name` so far (the gate counts a call it admits).
    pub fn calls_of(&self, name: &str) -> u64 {
        self.calls.get(name).copied().unwrap_or(0)
    }

    /// The same tools, having had `calls` already.
    pub fn with_calls(mut self, calls: BTreeMap<String, u64>) -> Self {
        self.calls = calls.into_iter().filter(|(name, _)| self.tools.contains_key(name)).collect();
        self
    }

    pub fn tools(&self) -> impl Iterator<Item = &Arc<Tool>> {
        self.tools.values()
    }

    /// Every known tool is bound in the guest; the gate refuses those code may not call,
    /// so the refusal is a distinct exception and a ledger entry rather than a NameError.
    ///
    /// A tool is answered in place when the service carries it out and `approvals` (the
    /// policy in force for `owner`, if any) can never hold its calls for a person.
    pub fn guest_tools(&self, approvals: Option<&ApprovalPolicy>, owner: &str) -> Vec<GuestTool> {
        self.tools
            .values()
            .map(|t| {
                let definition = &t.definition;
                // Client tools first: they never qualify, and need no walk through the rules.
                let in_place = definition.executor.is_server_side()
                    && approvals.is_none_or(|policy| {
                        matches!(
                            policy.preview(definition, owner).decision,
                            Some(RuleDecision::Allow | RuleDecision::Deny)
                        )
                    });
                definition.guest_tool(in_place)
            })
            .collect()
    }

    /// The gate: known, callable from code, quota left, arguments valid (after coercion,
    /// which rewrites `input` in place). Counts the call when it passes.
    pub fn admit(&mut self, name: &str, input: &mut Map<String, Value>) -> Result<Admission, ToolFailure> {
        let Some(tool) = self.tools.get(name) else {
            return Err(ToolFailure::new(FailureCode::UnknownTool, format!("there is no tool named {name:?}")));
        };
        let definition = &tool.definition;
        if !definition.callable_from_code() {
            return Err(ToolFailure::new(
                FailureCode::NotAllowed,
                format!("tool {name:?} cannot be called from code (allowed_callers does not include code execution)"),
            ));
        }
        let used = self.calls.entry(name.to_owned()).or_default();
        if let Some(quota) = definition.max_calls_per_execution
            && *used >= quota
        {
            return Err(ToolFailure::new(
                FailureCode::QuotaExceeded,
                format!("tool {name:?} allows {quota} calls per execution"),
            ));
        }
        let coerced = tool.schema.check(input).map_err(|e| {
            let mut failure =
                ToolFailure::new(FailureCode::InvalidInput, format!("{name}: {} (at {:?})", e.message, e.pointer));
            failure.details = serde_json::json!({"pointer": e.pointer});
            failure
        })?;
        *used += 1;
        Ok(Admission { tool: tool.clone(), coerced })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_callers_default_to_direct_only() {
        let tool: ToolDefinition = serde_json::from_value(serde_json::json!({"name": "send_email"})).unwrap();
        assert_eq!(tool.allowed_callers, vec![AllowedCaller::Direct]);
        assert!(!tool.callable_from_code());
        let mut tools = Toolset::from_definitions([tool]).unwrap();
        assert_eq!(tools.admit("send_email", &mut Map::new()).unwrap_err().code, crate::call::FailureCode::NotAllowed);
        assert_eq!(tools.admit("nope", &mut Map::new()).unwrap_err().code, crate::call::FailureCode::UnknownTool);
    }

    #[test]
    fn quota_is_counted_per_tool() {
        let mut tool = ToolDefinition::code_callable("q");
        tool.max_calls_per_execution = Some(2);
        let mut tools = Toolset::from_definitions([tool]).unwrap();
        assert!(tools.admit("q", &mut Map::new()).is_ok());
        assert!(tools.admit("q", &mut Map::new()).is_ok());
        assert_eq!(tools.admit("q", &mut Map::new()).unwrap_err().code, crate::call::FailureCode::QuotaExceeded);
    }

    #[test]
    fn invalid_arguments_are_refused_with_a_pointer_and_not_counted() {
        let mut tool = ToolDefinition::code_callable("q");
        tool.input_schema = serde_json::json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        tool.max_calls_per_execution = Some(1);
        let mut tools = Toolset::from_definitions([tool]).unwrap();
        let mut bad = serde_json::json!({"n": "x"}).as_object().cloned().unwrap();
        let refusal = tools.admit("q", &mut bad).unwrap_err();
        assert_eq!((refusal.code.as_str(), &refusal.details["pointer"]), ("invalid_input", &serde_json::json!("/n")));
        let mut coercible = serde_json::json!({"n": "7"}).as_object().cloned().unwrap();
        assert!(tools.admit("q", &mut coercible).unwrap().coerced);
        assert_eq!(coercible["n"], 7);
    }

    #[test]
    fn definitions_reject_unknown_fields_and_bad_names() {
        let typo = serde_json::json!({"name": "t", "allowed_caller": ["direct"]});
        assert!(serde_json::from_value::<ToolDefinition>(typo).is_err());
        let bad_caller = serde_json::json!({"name": "t", "allowed_callers": ["code_execution_1999"]});
        assert!(serde_json::from_value::<ToolDefinition>(bad_caller).is_err());
        assert!(ToolDefinition::code_callable("has space").validate().is_err());
        assert!(ToolDefinition::code_callable("get-expenses_2").validate().is_ok());
    }

    #[test]
    fn only_http_write_tools_may_act_before_they_are_recorded() {
        let mut tool = ToolDefinition::code_callable("w");
        assert!(!Tool::new(tool.clone()).unwrap().may_act(), "client tools are the caller's to run");
        tool.executor = Executor::Http { url: "http://127.0.0.1:1/x".into() };
        assert!(Tool::new(tool.clone()).unwrap().may_act());
        tool.side_effects = SideEffects::ReadOnly;
        assert!(!Tool::new(tool).unwrap().may_act());
    }

    #[test]
    fn params_follow_schema_property_order() {
        let tool: ToolDefinition = serde_json::from_value(serde_json::json!({
            "name": "t",
            "input_schema": {"type": "object", "properties": {"zeta": {}, "alpha": {}}}
        }))
        .unwrap();
        assert_eq!(tool.params(), vec!["zeta", "alpha"]);
    }
}
