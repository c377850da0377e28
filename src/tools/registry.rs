//! The tool registry: definitions registered once and named by executions, each belonging to
//! the API key that registered it.
//!
//! Tools are keyed by `(owner, name)`: another key's tools are invisible and untouchable (its
//! names are free to reuse), so no key can read, delete or replace what another registered.

use super::{Tool, ToolDefinition};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// Tools one key may register unless the operator says otherwise.
pub(crate) const DEFAULT_MAX_TOOLS_PER_OWNER: usize = 1_000;

/// Tools registered on this node, by owner and name.
#[derive(Debug)]
pub(crate) struct ToolRegistry {
    tools: RwLock<BTreeMap<(String, String), Arc<Tool>>>,
    max_per_owner: usize,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_TOOLS_PER_OWNER)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RegistryError {
    #[error("{0}")]
    Invalid(String),
    #[error("a tool named {0:?} is already registered")]
    Exists(String),
    #[error("this API key has registered {0} tools, the most it may (delete one to add another)")]
    Quota(usize),
}

impl ToolRegistry {
    pub(crate) fn new(max_per_owner: usize) -> Self {
        Self { tools: RwLock::default(), max_per_owner }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<(String, String), Arc<Tool>>> {
        self.tools.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<(String, String), Arc<Tool>>> {
        self.tools.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a checked definition for `owner`; a name is registered once per owner
    /// (delete it to replace it).
    pub(crate) fn create(&self, owner: &str, definition: ToolDefinition) -> Result<Arc<Tool>, RegistryError> {
        let tool = Tool::new(definition).map_err(RegistryError::Invalid)?;
        let mut tools = self.write();
        let key = (owner.to_owned(), tool.name().to_owned());
        if tools.contains_key(&key) {
            return Err(RegistryError::Exists(tool.name().to_owned()));
        }
        let owned = owned_range(&tools, owner).count();
        if owned >= self.max_per_owner {
            return Err(RegistryError::Quota(owned));
        }
        tools.insert(key, tool.clone());
        Ok(tool)
    }

    pub(crate) fn get(&self, owner: &str, name: &str) -> Option<Arc<Tool>> {
        self.read().get(&(owner.to_owned(), name.to_owned())).cloned()
    }

    /// `owner`'s tools, by name.
    pub(crate) fn list(&self, owner: &str) -> Vec<Arc<Tool>> {
        owned_range(&self.read(), owner).map(|(_, tool)| tool.clone()).collect()
    }

    pub(crate) fn delete(&self, owner: &str, name: &str) -> bool {
        self.write().remove(&(owner.to_owned(), name.to_owned())).is_some()
    }
}

/// The entries of one owner (keys sort by owner first).
fn owned_range<'a>(
    tools: &'a BTreeMap<(String, String), Arc<Tool>>,
    owner: &'a str,
) -> impl Iterator<Item = (&'a (String, String), &'a Arc<Tool>)> {
    tools.range((owner.to_owned(), String::new())..).take_while(move |((o, _), _)| o == owner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_registered_once_and_can_be_deleted() {
        let registry = ToolRegistry::default();
        registry.create("k", ToolDefinition::code_callable("a")).unwrap();
        let again = registry.create("k", ToolDefinition::code_callable("a")).unwrap_err();
        assert_eq!(again, RegistryError::Exists("a".into()));
        assert!(matches!(
            registry.create("k", ToolDefinition::code_callable("bad name")),
            Err(RegistryError::Invalid(_))
        ));
        assert_eq!(registry.list("k").len(), 1);
        assert!(registry.delete("k", "a"));
        assert!(registry.get("k", "a").is_none());
        assert!(!registry.delete("k", "a"));
    }

    /// Item 1 of the security review: tools were global, so any key could list, delete or
    /// replace another key's tools.
    #[test]
    fn item01_tools_belong_to_the_key_that_registered_them() {
        let registry = ToolRegistry::default();
        let mut victim = ToolDefinition::code_callable("lookup");
        victim.description = Some("the victim's".into());
        registry.create("victim", victim).unwrap();
        assert!(registry.list("attacker").is_empty(), "another key's tools are invisible");
        assert!(registry.get("attacker", "lookup").is_none());
        assert!(!registry.delete("attacker", "lookup"), "and cannot be deleted");
        let mut own = ToolDefinition::code_callable("lookup");
        own.description = Some("the attacker's".into());
        registry.create("attacker", own).unwrap();
        let kept = registry.get("victim", "lookup").unwrap();
        assert_eq!(kept.definition.description.as_deref(), Some("the victim's"), "the name is reused, not replaced");
        assert_eq!(registry.list("victim").len(), 1);
    }

    #[test]
    fn item01_each_key_has_a_cap_on_its_tools() {
        let registry = ToolRegistry::new(2);
        registry.create("k", ToolDefinition::code_callable("a")).unwrap();
        registry.create("k", ToolDefinition::code_callable("b")).unwrap();
        assert_eq!(registry.create("k", ToolDefinition::code_callable("c")).unwrap_err(), RegistryError::Quota(2));
        registry.create("other", ToolDefinition::code_callable("c")).unwrap();
        registry.delete("k", "a");
        registry.create("k", ToolDefinition::code_callable("c")).unwrap();
    }
}
