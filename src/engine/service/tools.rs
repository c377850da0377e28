//! Registered tools, per key, and the tools of one execution.

use super::*;

impl Service {
    /// Registers a tool for `owner`; an `http` tool's URL must be one the operator allows.
    pub fn create_tool(&self, owner: &Owner, definition: ToolDefinition) -> Result<Arc<Tool>, ServiceError> {
        use crate::tools::registry::RegistryError;
        self.check_destination(&definition)?;
        self.inner.registry.create(owner, definition).map_err(|e| match e {
            RegistryError::Invalid(m) => ServiceError::InvalidRequest(m),
            RegistryError::Exists(_) => ServiceError::Conflict(e.to_string()),
            RegistryError::Quota(_) => ServiceError::Quota(e.to_string()),
        })
    }

    /// `owner`'s tools, by name.
    pub fn list_tools(&self, owner: &Owner) -> Vec<Arc<Tool>> {
        self.inner.registry.list(owner)
    }

    pub fn get_tool(&self, owner: &Owner, name: &str) -> Result<Arc<Tool>, ServiceError> {
        self.inner.registry.get(owner, name).ok_or_else(|| ServiceError::NotFound(format!("tool {name}")))
    }

    pub fn delete_tool(&self, owner: &Owner, name: &str) -> Result<(), ServiceError> {
        if self.inner.registry.delete(owner, name) {
            Ok(())
        } else {
            Err(ServiceError::NotFound(format!("tool {name}")))
        }
    }

    /// Refuses an `http` tool whose URL is not under a prefix the operator allows.
    pub(super) fn check_destination(&self, definition: &ToolDefinition) -> Result<(), ServiceError> {
        match &definition.executor {
            Executor::Http { url } => self
                .inner
                .config
                .http
                .check_url(url)
                .map_err(|e| ServiceError::InvalidRequest(format!("tool {}: {e}", definition.name))),
            Executor::Client => Ok(()),
        }
    }

    /// Inline tools plus `owner`'s registered ones by name; names must not repeat.
    pub(super) fn toolset(&self, owner: &Owner, request: &NewExecution) -> Result<Toolset, ServiceError> {
        if request.tools.len() + request.tool_names.len() > MAX_TOOLS_PER_EXECUTION {
            return Err(ServiceError::InvalidRequest(format!("at most {MAX_TOOLS_PER_EXECUTION} tools per execution")));
        }
        let mut tools: BTreeMap<String, Arc<Tool>> = BTreeMap::new();
        let named = request.tool_names.iter().map(|name| {
            self.inner
                .registry
                .get(owner, name)
                .ok_or_else(|| ServiceError::InvalidRequest(format!("tool_names: no registered tool named {name:?}")))
        });
        let inline = request.tools.iter().map(|d| {
            self.check_destination(d)?;
            Tool::new(d.clone()).map_err(ServiceError::InvalidRequest)
        });
        for tool in inline.chain(named) {
            let tool = tool?;
            if tools.insert(tool.name().to_owned(), tool.clone()).is_some() {
                return Err(ServiceError::InvalidRequest(format!("tool {:?} is given twice", tool.name())));
            }
        }
        Ok(Toolset::new(tools.into_values()))
    }
}
