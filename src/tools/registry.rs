//! The tool registry: definitions registered once and named by executions.

use super::{Tool, ToolDefinition};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// Tools registered on this node, by name.
#[derive(Debug, Default)]
pub struct ToolRegistry {
    tools: RwLock<BTreeMap<String, Arc<Tool>>>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("{0}")]
    Invalid(String),
    #[error("a tool named {0:?} is already registered")]
    Exists(String),
}

impl ToolRegistry {
    /// Registers a checked definition; a name is registered once (delete it to replace it).
    pub fn create(&self, definition: ToolDefinition) -> Result<Arc<Tool>, RegistryError> {
        let tool = Tool::new(definition).map_err(RegistryError::Invalid)?;
        let mut tools = self.tools.write().unwrap_or_else(|p| p.into_inner());
        if tools.contains_key(tool.name()) {
            return Err(RegistryError::Exists(tool.name().to_owned()));
        }
        tools.insert(tool.name().to_owned(), tool.clone());
        Ok(tool)
    }

    pub fn get(&self, name: &str) -> Option<Arc<Tool>> {
        self.tools.read().unwrap_or_else(|p| p.into_inner()).get(name).cloned()
    }

    pub fn list(&self) -> Vec<Arc<Tool>> {
        self.tools.read().unwrap_or_else(|p| p.into_inner()).values().cloned().collect()
    }

    pub fn delete(&self, name: &str) -> bool {
        self.tools.write().unwrap_or_else(|p| p.into_inner()).remove(name).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_registered_once_and_can_be_deleted() {
        let registry = ToolRegistry::default();
        registry.create(ToolDefinition::code_callable("a")).unwrap();
        assert_eq!(registry.create(ToolDefinition::code_callable("a")).unwrap_err(), RegistryError::Exists("a".into()));
        assert!(matches!(registry.create(ToolDefinition::code_callable("bad name")), Err(RegistryError::Invalid(_))));
        assert_eq!(registry.list().len(), 1);
        assert!(registry.delete("a"));
        assert!(registry.get("a").is_none());
        assert!(!registry.delete("a"));
    }
}
