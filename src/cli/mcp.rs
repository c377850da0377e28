//! `sluice mcp`: Sluice as an MCP server over stdio, for a host (Claude Desktop, Claude Code,
//! Cursor, an agent SDK) that launches it. Stdout carries the protocol; logs go to stderr.

use super::{ServiceArgs, usage_error};
use crate::api::auth::ANONYMOUS;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    pub service: ServiceArgs,
}

pub(super) async fn mcp(args: McpArgs) -> ExitCode {
    super::serve::init_logging();
    // Over stdio there is no API for a person to approve a held call: it is denied at once.
    let nobody = "nobody can approve calls over `sluice mcp` (stdio): set requires_approval or an approval \
                  policy rule for this tool, or run `sluice serve` and approve over HTTP";
    let service = match args.service.build(Some(nobody)).await {
        Ok(service) => service,
        Err(e) => return usage_error(&e),
    };
    // The host that launched us is the one caller: it acts as a server without keys does.
    let served = crate::api::mcp::serve_stdio(service.clone(), ANONYMOUS.into()).await;
    service.shutdown().await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage_error(&e),
    }
}
