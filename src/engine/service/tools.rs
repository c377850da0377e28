//! Registered tools, per key; the operator's MCP tools, which every key may name; and the
//! tools of one execution.

use super::*;

impl Service {
    /// Registers a tool for `owner`; an `http` tool's URL must be one the operator allows.
    pub fn create_tool(&self, owner: &Owner, definition: ToolDefinition) -> Result<Arc<Tool>, ServiceError> {
        use crate::tools::registry::RegistryError;
        self.check_destination(&definition)?;
        if self.inner.config.mcp.get(None, &definition.name).is_some() {
            return Err(ServiceError::Conflict(format!(
                "{:?} is a tool of one of the operator's MCP servers; choose another name",
                definition.name
            )));
        }
        self.inner.registry.create(owner, definition).map_err(|e| match e {
            RegistryError::Invalid(m) => ServiceError::InvalidRequest(m),
            RegistryError::Exists(_) => ServiceError::Conflict(e.to_string()),
            RegistryError::Quota(_) => ServiceError::Quota(e.to_string()),
        })
    }

    /// `owner`'s tools, by name, then the MCP servers' tools.
    pub fn list_tools(&self, owner: &Owner) -> Vec<Arc<Tool>> {
        let mut tools = self.inner.registry.list(owner);
        tools.extend(self.inner.config.mcp.tools(Some(owner)));
        tools
    }

    /// Searches `owner`'s catalog (registered and MCP tools, deferred ones included) by words
    /// or by pattern.
    pub fn search_tools(
        &self,
        owner: &Owner,
        request: &crate::tools::search::SearchRequest,
    ) -> Result<Vec<crate::tools::search::SearchHit>, ServiceError> {
        Ok(crate::tools::search::search(&self.list_tools(owner), request)?)
    }

    /// Tools the service calls itself (`http`, `mcp`) that code may call: what an execution
    /// with no caller to answer `client` tools (one through MCP) can use.
    pub fn server_side_tools(&self, owner: &Owner) -> Vec<Arc<Tool>> {
        let server_side =
            |tool: &Arc<Tool>| tool.definition.executor.is_server_side() && tool.definition.callable_from_code();
        self.list_tools(owner).into_iter().filter(server_side).collect()
    }

    /// One of `owner`'s tools, or else an MCP server's of that name.
    pub fn get_tool(&self, owner: &Owner, name: &str) -> Result<Arc<Tool>, ServiceError> {
        self.inner
            .registry
            .get(owner, name)
            .or_else(|| self.inner.config.mcp.get(Some(owner), name))
            .ok_or_else(|| ServiceError::NotFound(format!("tool {name}")))
    }

    pub fn delete_tool(&self, owner: &Owner, name: &str) -> Result<(), ServiceError> {
        if self.inner.registry.delete(owner, name) {
            Ok(())
        } else if self.inner.config.mcp.get(Some(owner), name).is_some() {
            Err(ServiceError::Conflict(format!(
                "{name:?} comes from the operator's MCP configuration and cannot be deleted"
            )))
        } else {
            Err(ServiceError::NotFound(format!("tool {name}")))
        }
    }

    /// Refuses an `http` tool whose URL is not under a prefix the operator allows, and any
    /// `mcp` tool (only the operator's configuration names MCP servers).
    pub(super) fn check_destination(&self, definition: &ToolDefinition) -> Result<(), ServiceError> {
        match &definition.executor {
            Executor::Http { url } => self
                .inner
                .config
                .http
                .check_url(url)
                .map_err(|e| ServiceError::InvalidRequest(format!("tool {}: {e}", definition.name))),
            Executor::Mcp { .. } => Err(ServiceError::InvalidRequest(format!(
                "tool {}: mcp tools come from the operator's MCP configuration; name them in tool_names",
                definition.name
            ))),
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
            self.get_tool(owner, name)
                .map_err(|_| ServiceError::InvalidRequest(format!("tool_names: no registered tool named {name:?}")))
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
        if request.server_side_tools {
            for tool in self.server_side_tools(owner) {
                tools.entry(tool.name().to_owned()).or_insert(tool);
            }
        }
        Ok(Toolset::new(tools.into_values()))
    }
}
