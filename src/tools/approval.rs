//! Approvals: which calls from code a person must allow before they run, and the operator's
//! policy that allows or denies calls with no person in the loop.
//!
//! A policy is an ordered list of rules; the first rule that matches a call decides it
//! (`allow`, `deny` or `ask`). A rule matches by tool name (exact, or a `*` glob), by API key
//! (owner id), by conditions on the call's arguments (a JSON path and a comparison) and by how
//! many calls to the tool the execution has made. A call no rule matches is asked about when
//! its tool requires approval ([`ToolDefinition::needs_approval`]) and allowed otherwise.

use super::ToolDefinition;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Longest `tool` name or glob of a rule.
pub(crate) const MAX_RULE_TOOL_BYTES: usize = 128;
/// Rules one policy may hold.
pub(crate) const MAX_POLICY_RULES: usize = 1_000;
/// Conditions one rule may hold.
pub(crate) const MAX_RULE_CONDITIONS: usize = 32;
/// Longest JSON path in a condition.
pub(crate) const MAX_PATH_BYTES: usize = 256;
/// Longest `matches` pattern (compiled with Rust's `regex`: linear time, bounded size).
pub(crate) const MAX_PATTERN_BYTES: usize = 512;
/// Compiled size a `matches` pattern may take.
const MAX_COMPILED_PATTERN_BYTES: usize = 1 << 20;

/// What a rule (or the default) says about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleDecision {
    Allow,
    Deny,
    /// A person decides (`POST /v1/executions/{id}/approvals`).
    Ask,
}

/// The operator's approval policy (`--approval-policy FILE`).
#[derive(Debug, Clone, Default)]
pub struct ApprovalPolicy {
    rules: Vec<Rule>,
    /// Set where no person can answer (`sluice mcp` over stdio): a call that would be held is
    /// denied at once, with this as the reason, rather than left to time out.
    nobody_to_ask: Option<String>,
}

/// The policy file as written: `{"rules": [...]}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    rules: Vec<RuleFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    /// A tool name, or a glob with `*` (`"*"`, `"github__*"`).
    tool: String,
    /// Owner ids (`key_...`) the rule applies to; every key when absent.
    #[serde(default)]
    keys: Option<Vec<String>>,
    #[serde(default)]
    when: Vec<ConditionFile>,
    /// The rule matches only the tool's first N calls of an execution.
    #[serde(default)]
    max_per_execution: Option<u64>,
    decision: RuleDecision,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConditionFile {
    path: String,
    #[serde(default)]
    equals: Option<Value>,
    #[serde(default)]
    not_equals: Option<Value>,
    #[serde(default, rename = "in")]
    one_of: Option<Vec<Value>>,
    #[serde(default)]
    matches: Option<String>,
    #[serde(default)]
    lt: Option<f64>,
    #[serde(default)]
    lte: Option<f64>,
    #[serde(default)]
    gt: Option<f64>,
    #[serde(default)]
    gte: Option<f64>,
    #[serde(default)]
    exists: Option<bool>,
}

#[derive(Debug, Clone)]
struct Rule {
    tool: String,
    keys: Option<Vec<String>>,
    when: Vec<Condition>,
    max_per_execution: Option<u64>,
    decision: RuleDecision,
    reason: Option<String>,
}

#[derive(Debug, Clone)]
struct Condition {
    path: Vec<PathStep>,
    test: Test,
}

#[derive(Debug, Clone, PartialEq)]
enum PathStep {
    Key(String),
    Index(usize),
}

#[derive(Debug, Clone)]
enum Test {
    Equals(Value),
    NotEquals(Value),
    OneOf(Vec<Value>),
    Matches(regex::Regex),
    Lt(f64),
    Lte(f64),
    Gt(f64),
    Gte(f64),
    Exists(bool),
}

/// How the policy decided one call: the decision, the rule that made it (its index in the
/// file, none for the default) and the rule's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub decision: RuleDecision,
    pub rule: Option<usize>,
    pub reason: Option<String>,
}

/// What the policy says of a tool before any call is made (a preview): a decision when every
/// call would get the same one, `None` when it depends on the arguments or the count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticVerdict {
    pub decision: Option<RuleDecision>,
}

impl ApprovalPolicy {
    /// Parses and checks a policy document.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let file: PolicyFile = serde_json::from_str(text).map_err(|e| format!("approval policy: {e}"))?;
        if file.rules.len() > MAX_POLICY_RULES {
            return Err(format!("approval policy: more than {MAX_POLICY_RULES} rules"));
        }
        let rules = file
            .rules
            .into_iter()
            .enumerate()
            .map(|(at, rule)| Rule::compile(rule).map_err(|e| format!("approval policy: rule {at}: {e}")))
            .collect::<Result<_, _>>()?;
        Ok(Self { rules, nobody_to_ask: None })
    }

    /// The same rules where no person can approve: calls they would hold are denied, with
    /// `why` as the reason.
    pub fn with_nobody_to_ask(mut self, why: impl Into<String>) -> Self {
        self.nobody_to_ask = Some(why.into());
        self
    }

    /// Reads a policy file.
    pub fn load(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("approval policy {}: {e}", path.display()))?;
        Self::from_json(&text)
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Decides one call: `calls` is how many calls to this tool the execution has made,
    /// this one included.
    pub fn decide(&self, tool: &ToolDefinition, input: &Map<String, Value>, owner: &str, calls: u64) -> Verdict {
        let verdict = self.decide_by_rules(tool, input, owner, calls);
        match &self.nobody_to_ask {
            Some(why) if verdict.decision == RuleDecision::Ask => {
                Verdict { decision: RuleDecision::Deny, rule: verdict.rule, reason: Some(why.clone()) }
            }
            _ => verdict,
        }
    }

    fn decide_by_rules(&self, tool: &ToolDefinition, input: &Map<String, Value>, owner: &str, calls: u64) -> Verdict {
        for (at, rule) in self.rules.iter().enumerate() {
            if rule.applies_to(&tool.name, owner)
                && rule.max_per_execution.is_none_or(|max| calls <= max)
                && rule.when.iter().all(|c| c.holds(input))
            {
                return Verdict { decision: rule.decision, rule: Some(at), reason: rule.reason.clone() };
            }
        }
        let decision = if tool.needs_approval() { RuleDecision::Ask } else { RuleDecision::Allow };
        let reason = tool.needs_approval().then(|| format!("{} requires approval", tool.name));
        Verdict { decision, rule: None, reason }
    }

    /// What every call to `tool` by `owner` would get, if the arguments and counts cannot
    /// change it.
    pub fn preview(&self, tool: &ToolDefinition, owner: &str) -> StaticVerdict {
        let verdict = self.preview_by_rules(tool, owner);
        match verdict.decision {
            Some(RuleDecision::Ask) if self.nobody_to_ask.is_some() => {
                StaticVerdict { decision: Some(RuleDecision::Deny) }
            }
            _ => verdict,
        }
    }

    fn preview_by_rules(&self, tool: &ToolDefinition, owner: &str) -> StaticVerdict {
        match self.rules.iter().find(|r| r.applies_to(&tool.name, owner)) {
            Some(rule) if rule.when.is_empty() && rule.max_per_execution.is_none() => {
                StaticVerdict { decision: Some(rule.decision) }
            }
            // A conditional rule: some calls may match it and others fall through.
            Some(_) => StaticVerdict { decision: None },
            None => StaticVerdict {
                decision: Some(if tool.needs_approval() { RuleDecision::Ask } else { RuleDecision::Allow }),
            },
        }
    }
}

impl Rule {
    fn compile(rule: RuleFile) -> Result<Self, String> {
        if rule.tool.is_empty() || rule.tool.len() > MAX_RULE_TOOL_BYTES {
            return Err(format!("tool must be a name or a glob of 1 to {MAX_RULE_TOOL_BYTES} bytes"));
        }
        if rule.when.len() > MAX_RULE_CONDITIONS {
            return Err(format!("more than {MAX_RULE_CONDITIONS} conditions"));
        }
        let when = rule.when.into_iter().map(Condition::compile).collect::<Result<_, _>>()?;
        Ok(Self {
            tool: rule.tool,
            keys: rule.keys,
            when,
            max_per_execution: rule.max_per_execution,
            decision: rule.decision,
            reason: rule.reason,
        })
    }

    fn applies_to(&self, tool: &str, owner: &str) -> bool {
        glob_matches(&self.tool, tool) && self.keys.as_ref().is_none_or(|keys| keys.iter().any(|k| k == owner))
    }
}

impl Condition {
    fn compile(condition: ConditionFile) -> Result<Self, String> {
        let path = parse_path(&condition.path)?;
        let mut tests = Vec::new();
        let ConditionFile { equals, not_equals, one_of, matches, lt, lte, gt, gte, exists, .. } = condition;
        tests.extend(equals.map(Test::Equals));
        tests.extend(not_equals.map(Test::NotEquals));
        tests.extend(one_of.map(Test::OneOf));
        if let Some(pattern) = matches {
            if pattern.len() > MAX_PATTERN_BYTES {
                return Err(format!("a matches pattern is longer than {MAX_PATTERN_BYTES} bytes"));
            }
            let regex = regex::RegexBuilder::new(&pattern)
                .size_limit(MAX_COMPILED_PATTERN_BYTES)
                .build()
                .map_err(|e| format!("matches {pattern:?}: {e}"))?;
            tests.push(Test::Matches(regex));
        }
        tests.extend(lt.map(Test::Lt));
        tests.extend(lte.map(Test::Lte));
        tests.extend(gt.map(Test::Gt));
        tests.extend(gte.map(Test::Gte));
        tests.extend(exists.map(Test::Exists));
        match tests.len() {
            1 => Ok(Self { path, test: tests.remove(0) }),
            0 => Err(format!("condition on {} has no comparison", condition.path)),
            _ => {
                Err(format!("condition on {} has more than one comparison (write one condition each)", condition.path))
            }
        }
    }

    fn holds(&self, input: &Map<String, Value>) -> bool {
        let value = resolve(input, &self.path);
        match (&self.test, value) {
            (Test::Exists(wanted), found) => *wanted == found.is_some(),
            (_, None) => false,
            (Test::Equals(expected), Some(v)) => same(v, expected),
            (Test::NotEquals(expected), Some(v)) => !same(v, expected),
            (Test::OneOf(options), Some(v)) => options.iter().any(|o| same(v, o)),
            (Test::Matches(regex), Some(v)) => v.as_str().is_some_and(|s| regex.is_match(s)),
            (Test::Lt(n), Some(v)) => v.as_f64().is_some_and(|x| x < *n),
            (Test::Lte(n), Some(v)) => v.as_f64().is_some_and(|x| x <= *n),
            (Test::Gt(n), Some(v)) => v.as_f64().is_some_and(|x| x > *n),
            (Test::Gte(n), Some(v)) => v.as_f64().is_some_and(|x| x >= *n),
        }
    }
}

/// JSON values equal, numbers by value (`1` equals `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.is_number() && b.is_number() => x == y,
        _ => a == b,
    }
}

/// A JSON path of the simple kind conditions need: `$`, then `.name`, `['name']` or `[N]`
/// steps (`$.customer.emails[0]`). Filters and wildcards are refused: a condition names one
/// value.
fn parse_path(path: &str) -> Result<Vec<PathStep>, String> {
    if path.len() > MAX_PATH_BYTES {
        return Err(format!("path is longer than {MAX_PATH_BYTES} bytes"));
    }
    let bad = |why: &str| format!("path {path:?}: {why} (write $.name, $.list[0] or $['odd name'])");
    let mut rest = path.strip_prefix('$').ok_or_else(|| bad("must start with $"))?;
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let name = &after[..end];
            if name.is_empty() || name == "*" {
                return Err(bad("an empty or wildcard name"));
            }
            steps.push(PathStep::Key(name.to_owned()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("['") {
            let end = after.find("']").ok_or_else(|| bad("an unclosed ['"))?;
            steps.push(PathStep::Key(after[..end].to_owned()));
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').ok_or_else(|| bad("an unclosed ["))?;
            let index = after[..end].parse().map_err(|_| bad("an index that is not a number"))?;
            steps.push(PathStep::Index(index));
            rest = &after[end + 1..];
        } else {
            return Err(bad("unexpected text"));
        }
    }
    Ok(steps)
}

fn resolve<'a>(input: &'a Map<String, Value>, path: &[PathStep]) -> Option<&'a Value> {
    let (first, rest) = match path.split_first() {
        None => return None,
        Some((PathStep::Key(key), rest)) => (input.get(key)?, rest),
        Some((PathStep::Index(_), _)) => return None,
    };
    rest.iter().try_fold(first, |value, step| match step {
        PathStep::Key(key) => value.get(key),
        PathStep::Index(index) => value.get(*index),
    })
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
fn glob_matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{Executor, SideEffects};
    use serde_json::json;

    fn tool(name: &str, side_effects: SideEffects) -> ToolDefinition {
        let mut tool = ToolDefinition::code_callable(name);
        tool.executor = Executor::Http { url: "https://example.com/t".into() };
        tool.side_effects = side_effects;
        tool
    }

    fn input(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn without_rules_write_tools_with_effects_ask_and_the_rest_are_allowed() {
        let policy = ApprovalPolicy::default();
        let write = tool("send", SideEffects::Write);
        assert_eq!(policy.decide(&write, &Map::new(), "k", 1).decision, RuleDecision::Ask);
        assert_eq!(
            policy.decide(&tool("read", SideEffects::ReadOnly), &Map::new(), "k", 1).decision,
            RuleDecision::Allow
        );
        let client = ToolDefinition::code_callable("client_write");
        assert_eq!(policy.decide(&client, &Map::new(), "k", 1).decision, RuleDecision::Allow, "the caller runs it");
        let mut opted_out = write.clone();
        opted_out.requires_approval = Some(false);
        assert_eq!(policy.decide(&opted_out, &Map::new(), "k", 1).decision, RuleDecision::Allow);
    }

    #[test]
    fn the_first_matching_rule_decides_by_argument_count_and_key() {
        let policy = ApprovalPolicy::from_json(
            &json!({"rules": [
                {"tool": "refund", "keys": ["key_blocked"], "decision": "deny", "reason": "no refunds for this key"},
                {"tool": "refund", "when": [{"path": "$.amount", "lte": 100}], "max_per_execution": 2, "decision": "allow"},
                {"tool": "refund", "when": [{"path": "$.customer.tier", "in": ["gold"]}], "decision": "ask"},
                {"tool": "refund", "decision": "deny"},
                {"tool": "mail_*", "when": [{"path": "$.to", "matches": "@example\\.com$"}], "decision": "allow"}
            ]})
            .to_string(),
        )
        .unwrap();
        let refund = tool("refund", SideEffects::Write);
        let decide = |args: Value, owner: &str, calls: u64| policy.decide(&refund, &input(args), owner, calls);
        let blocked = decide(json!({"amount": 5}), "key_blocked", 1);
        assert_eq!((blocked.decision, blocked.rule), (RuleDecision::Deny, Some(0)));
        assert_eq!(blocked.reason.as_deref(), Some("no refunds for this key"));
        assert_eq!(decide(json!({"amount": 100.0}), "k", 2).decision, RuleDecision::Allow);
        assert_eq!(decide(json!({"amount": 100}), "k", 3).rule, Some(3), "past the count the rule falls through");
        assert_eq!(decide(json!({"amount": 500, "customer": {"tier": "gold"}}), "k", 1).decision, RuleDecision::Ask);
        assert_eq!(decide(json!({"amount": "5"}), "k", 1).rule, Some(3), "a string is not a number");
        let mail = tool("mail_send", SideEffects::Write);
        assert_eq!(policy.decide(&mail, &input(json!({"to": "a@example.com"})), "k", 1).decision, RuleDecision::Allow);
        assert_eq!(policy.decide(&mail, &input(json!({"to": "a@evil.com"})), "k", 1).decision, RuleDecision::Ask);
    }

    #[test]
    fn with_nobody_to_ask_held_calls_are_denied_with_the_reason() {
        let policy = ApprovalPolicy::default().with_nobody_to_ask("no approver here");
        let verdict = policy.decide(&tool("send", SideEffects::Write), &Map::new(), "k", 1);
        assert_eq!((verdict.decision, verdict.reason.as_deref()), (RuleDecision::Deny, Some("no approver here")));
        assert_eq!(
            policy.decide(&tool("read", SideEffects::ReadOnly), &Map::new(), "k", 1).decision,
            RuleDecision::Allow
        );
    }

    #[test]
    fn previews_say_when_the_decision_depends_on_the_call() {
        let policy = ApprovalPolicy::from_json(
            r#"{"rules": [{"tool": "a", "decision": "deny"}, {"tool": "b", "when": [{"path": "$.x", "exists": true}], "decision": "allow"}]}"#,
        )
        .unwrap();
        assert_eq!(policy.preview(&tool("a", SideEffects::ReadOnly), "k").decision, Some(RuleDecision::Deny));
        assert_eq!(policy.preview(&tool("b", SideEffects::Write), "k").decision, None);
        assert_eq!(policy.preview(&tool("c", SideEffects::Write), "k").decision, Some(RuleDecision::Ask));
    }

    #[test]
    fn malformed_policies_are_refused_with_the_rule_named() {
        for (policy, needle) in [
            (r#"{"rules": [{"tool": "a"}]}"#, "decision"),
            (r#"{"rules": [{"tool": "a", "decision": "maybe"}]}"#, "maybe"),
            (r#"{"rules": [{"tool": "a", "decision": "allow", "when": [{"path": "amount", "lt": 1}]}]}"#, "rule 0"),
            (r#"{"rules": [{"tool": "a", "decision": "allow", "when": [{"path": "$.a", "lt": 1, "gt": 0}]}]}"#, "one"),
            (r#"{"rules": [{"tool": "a", "decision": "allow", "when": [{"path": "$.a"}]}]}"#, "no comparison"),
            (
                r#"{"rules": [{"tool": "a", "decision": "allow", "when": [{"path": "$.a", "matches": "("}]}]}"#,
                "matches",
            ),
            (r#"{"rulez": []}"#, "rulez"),
        ] {
            let error = ApprovalPolicy::from_json(policy).unwrap_err();
            assert!(error.contains(needle), "{policy}: {error}");
        }
    }

    #[test]
    fn paths_and_globs() {
        assert_eq!(
            parse_path("$.a['b c'][2].d").unwrap(),
            vec![PathStep::Key("a".into()), PathStep::Key("b c".into()), PathStep::Index(2), PathStep::Key("d".into())]
        );
        for bad in ["$..a", "$.*", "$[x]", "a.b", "$.a[1"] {
            assert!(parse_path(bad).is_err(), "{bad}");
        }
        let value = input(json!({"a": {"b c": [0, 1, {"d": true}]}}));
        assert_eq!(resolve(&value, &parse_path("$.a['b c'][2].d").unwrap()), Some(&json!(true)));
        assert!(glob_matches("*", "anything") && glob_matches("gh__*", "gh__list") && glob_matches("*_pr*", "gh_prs"));
        assert!(!glob_matches("gh__*", "gl__list") && !glob_matches("a*b", "ab_") && !glob_matches("send", "send2"));
        assert!(glob_matches("a*b*a", "aba") && !glob_matches("a*a", "a"));
    }
}
