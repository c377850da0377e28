//! `sluice audit`: verify the hash chains, export a container's history, list, prune.

use super::{StoreArgs, usage_error};
use crate::audit::{ExecutionFilter, write_bundle};
use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub(crate) enum AuditCommand {
    /// Check every hash chain; exit 0 when all hold, 1 naming the first broken record.
    Verify {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Write a container's history as a bundle (JSON lines) to stdout or a file.
    Export {
        container_id: String,
        #[arg(long, short)]
        output: Option<PathBuf>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List executions on record, newest first.
    List {
        #[arg(long)]
        container: Option<String>,
        #[arg(long)]
        outcome: Option<String>,
        #[arg(long)]
        tool: Option<String>,
        /// Executions with a call that was `approved`, `denied`, or `asked` about (a person was
        /// asked to decide).
        #[arg(long, value_parser = ["approved", "denied", "asked"])]
        approval: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: i64,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Delete the whole history of containers idle for longer than the given age.
    Prune {
        #[arg(long)]
        older_than_days: u64,
        #[command(flatten)]
        store: StoreArgs,
    },
}

pub(super) async fn audit_command(command: AuditCommand) -> ExitCode {
    let result: Result<ExitCode, String> = async {
        match command {
            AuditCommand::Verify { store } => {
                let report = store.open(false).await?.0.verify().await.map_err(|e| e.to_string())?;
                match report.broken {
                    None => {
                        println!(
                            "ok: {} records in {} containers, every chain holds",
                            report.records, report.containers
                        );
                        Ok(ExitCode::SUCCESS)
                    }
                    Some(broken) => {
                        println!("broken: {broken}");
                        Ok(ExitCode::from(1))
                    }
                }
            }
            AuditCommand::Export { container_id, output, store } => {
                let records = store.open(false).await?.0.records(&container_id).await.map_err(|e| e.to_string())?;
                if records.is_empty() {
                    return Err(format!("no records for container {container_id}"));
                }
                let mut bundle = Vec::new();
                write_bundle(&container_id, &records, &mut bundle).map_err(|e| e.to_string())?;
                match output {
                    Some(path) => {
                        std::fs::write(&path, bundle).map_err(|e| format!("cannot write {}: {e}", path.display()))?
                    }
                    None => std::io::Write::write_all(&mut std::io::stdout(), &bundle).map_err(|e| e.to_string())?,
                }
                Ok(ExitCode::SUCCESS)
            }
            AuditCommand::List { container, outcome, tool, approval, limit, store } => {
                let filter = ExecutionFilter {
                    container_id: container,
                    outcome,
                    tool,
                    approval,
                    limit: Some(limit),
                    ..Default::default()
                };
                for row in store.open(false).await?.0.list_executions(&filter).await.map_err(|e| e.to_string())? {
                    println!("{}", serde_json::to_string(&row).map_err(|e| e.to_string())?);
                }
                Ok(ExitCode::SUCCESS)
            }
            AuditCommand::Prune { older_than_days, store } => {
                let cutoff = std::time::SystemTime::now() - std::time::Duration::from_secs(older_than_days * 86_400);
                let removed = store.open(false).await?.0.prune(cutoff).await.map_err(|e| e.to_string())?;
                println!("removed the history of {removed} containers idle for more than {older_than_days} days");
                Ok(ExitCode::SUCCESS)
            }
        }
    }
    .await;
    result.unwrap_or_else(|e| usage_error(&e))
}
