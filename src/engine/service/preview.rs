//! A preview of an execution: the tools its code could reach, their side effects and what
//! the approval policy would say, found by reading the code without running it.

use super::*;
use crate::tools::approval::RuleDecision;
use crate::tools::preview::ScriptNames;

/// What a script could reach, before it runs.
#[derive(Debug, Clone, Serialize)]
pub struct Preview {
    pub tools: Vec<PreviewTool>,
    /// False when the code can reach tools in ways reading cannot follow (`notes` says how):
    /// such calls still pass the gate and the policy when they are made.
    pub complete: bool,
    pub notes: Vec<String>,
}

/// One tool the code names.
#[derive(Debug, Clone, Serialize)]
pub struct PreviewTool {
    pub name: String,
    /// `client`, `http` or `mcp`.
    pub executor: &'static str,
    pub side_effects: crate::tools::SideEffects,
    /// Whether code may call it at all (`allowed_callers`); a call that may not is refused.
    pub callable_from_code: bool,
    /// `not_required`, `required` (a person decides), `denied` (by the policy) or `depends`
    /// (a policy rule looks at the arguments or the count).
    pub approval: &'static str,
    /// Lines of the code that name it.
    pub lines: Vec<u32>,
}

impl Service {
    /// The tools `request`'s code names, with what the approval policy would say of them;
    /// nothing runs and nothing is recorded.
    pub fn preview_execution(&self, owner: &Owner, request: &NewExecution) -> Result<Preview, ServiceError> {
        if request.code.len() > MAX_CODE_BYTES {
            return Err(ServiceError::InvalidRequest(format!("code is longer than {MAX_CODE_BYTES} bytes")));
        }
        let toolset = self.toolset(owner, request)?;
        let names = ScriptNames::read(&request.code);
        let policy = &self.inner.config.approvals;
        let tools = toolset
            .tools()
            .filter_map(|tool| {
                let definition = &tool.definition;
                let python_name = crate::tools::search::python_name(&definition.name);
                let lines = names.find(&python_name)?.to_vec();
                let approval = match policy.preview(definition, owner).decision {
                    Some(RuleDecision::Allow) => "not_required",
                    Some(RuleDecision::Ask) => "required",
                    Some(RuleDecision::Deny) => "denied",
                    None => "depends",
                };
                Some(PreviewTool {
                    name: definition.name.clone(),
                    executor: definition.executor.kind(),
                    side_effects: definition.side_effects,
                    callable_from_code: definition.callable_from_code(),
                    approval,
                    lines,
                })
            })
            .collect();
        let mut notes = Vec::new();
        let dynamic = names.dynamic();
        if !dynamic.is_empty() {
            notes.push(format!(
                "the code uses {}, through which it can call a tool without naming it",
                dynamic.join(", ")
            ));
        }
        if request.container.is_some() {
            notes.push(
                "functions defined by earlier executions in the container can call tools this code does not name"
                    .into(),
            );
        }
        Ok(Preview { tools, complete: notes.is_empty(), notes })
    }
}
