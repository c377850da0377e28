//! Where the real Python and MCP parts are (installed by `tests/python/setup.sh`): the venv
//! with the `mcp` and `anthropic` SDKs and mcp-server-time, mcp-server-sqlite in its own, and
//! the npm server-memory.

#![allow(dead_code)]

use std::path::PathBuf;

/// Packages of the venv the tests import.
const PACKAGES: [&str; 11] = [
    "anthropic",
    "mcp",
    "pytest",
    "mypy",
    "httpx",
    "fastmcp",
    "pydantic_ai",
    "smolagents",
    "langchain_core",
    "playwright",
    "opentelemetry",
];

pub struct PythonParts {
    pub python: PathBuf,
    pub time_server: PathBuf,
    pub sqlite_server: PathBuf,
    /// server-memory's entry point, run with `node`.
    pub memory_server: PathBuf,
}

impl PythonParts {
    /// The parts, if every one is installed.
    pub fn find() -> Option<Self> {
        let root = std::env::var_os("SLUICE_TEST_PYTHON_ENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/python-test-env"));
        let bin = root.join("venv/bin");
        let parts = Self {
            python: bin.join("python"),
            time_server: bin.join("mcp-server-time"),
            sqlite_server: root.join("sqlite-venv/bin/mcp-server-sqlite"),
            memory_server: root.join("node/node_modules/@modelcontextprotocol/server-memory/dist/index.js"),
        };
        let node = std::process::Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
        let all = [&parts.python, &parts.time_server, &parts.sqlite_server, &parts.memory_server];
        let site_packages: Vec<PathBuf> = std::fs::read_dir(root.join("venv/lib"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|python| python.path().join("site-packages"))
            .collect();
        let packages = PACKAGES.iter().all(|p| site_packages.iter().any(|s| s.join(p).is_dir()));
        (node && packages && all.iter().all(|p| p.exists())).then_some(parts)
    }

    /// An `--mcp-config` with the three servers; the SQLite database and the memory file live
    /// in `dir`. Their write tools run without approval (`requires_approval: false`): these
    /// tests are about MCP; `mcp::an_mcp_write_waits_for_approval` is about approvals.
    pub fn config(&self, dir: &std::path::Path) -> serde_json::Value {
        serde_json::json!({"mcpServers": {
            "time": {"command": self.time_server, "args": ["--local-timezone", "UTC"], "isolation": "shared"},
            "sqlite": {"command": self.sqlite_server, "args": ["--db-path", dir.join("shop.db")], "timeout_ms": 60000,
                       "requires_approval": false},
            "memory": {"command": "node", "args": [self.memory_server], "requires_approval": false,
                       "env": {"MEMORY_FILE_PATH": dir.join("memory-${SLUICE_OWNER}.jsonl")}}
        }})
    }
}
