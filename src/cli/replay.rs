//! `sluice replay`: re-run an execution from the store or an exported bundle, and compare.

use super::{RUN_MAX_CONTAINERS, StoreArgs, usage_error};
use crate::audit::{ContainerHistory, read_bundle, verify_chain};
use crate::sandbox::{Sandbox, SandboxConfig};
use std::path::PathBuf;
use std::process::ExitCode;

pub(super) async fn replay_command(
    execution_id: Option<String>,
    bundle: Option<PathBuf>,
    store: StoreArgs,
    cache_dir: Option<PathBuf>,
) -> ExitCode {
    let loaded = async {
        let (container_id, records, key, opened) = match &bundle {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                let (container_id, records) = read_bundle(&text)?;
                // A bundle read away from its server can be replayed; its seals only checked
                // with the key that made them.
                (container_id, records, store.key(false).ok(), None)
            }
            None => {
                let id = execution_id.as_deref().ok_or("give an execution id, or --bundle FILE")?;
                let (store, key) = store.open(false).await?;
                let (container_id, _) = store
                    .container_of(id)
                    .await
                    .map_err(|e| e.to_string())?
                    .ok_or(format!("no execution {id} on record"))?;
                let records = store.records(&container_id).await.map_err(|e| e.to_string())?;
                (container_id, records, Some(key), Some(store))
            }
        };
        let chain = key.as_ref().map(|key| verify_chain(&key.chain_key(), &container_id, &records));
        let history = ContainerHistory::from_records(&container_id, &records)?;
        let target = match execution_id.clone() {
            Some(id) => id,
            None => history.executions.last().map(|e| e.execution_id.clone()).ok_or("the bundle has no executions")?,
        };
        // Files the executions were given: from the store when replaying from it (a bundle
        // carries no file bytes, so executions given files cannot be replayed from one).
        let mut uploads = crate::engine::UploadBytes::new();
        if let Some(store) = &opened {
            for id in crate::engine::replay::uploads_named(&history, &target) {
                if let Some((_, bytes)) = store.file_content(&history.owner, &id).await.map_err(|e| e.to_string())? {
                    uploads.insert(id, bytes.into());
                }
            }
        }
        Ok::<_, String>((chain, history, target, uploads))
    }
    .await;
    let (chain, history, target, uploads) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => return usage_error(&e),
    };
    // One container (and a second while it is rolled back): reserving the service's
    // thousand slots would cost startup time for nothing.
    let mut config =
        SandboxConfig { max_containers: RUN_MAX_CONTAINERS, ready_containers: 0, ..SandboxConfig::default() };
    if let Some(dir) = cache_dir {
        config.cache_dir = dir;
    }
    let sandbox = match Sandbox::new(config).await {
        Ok(sandbox) => sandbox,
        Err(e) => return usage_error(&e.to_string()),
    };
    let report = match crate::engine::replay::replay(&sandbox, &history, &target, &uploads).await {
        Ok(report) => report,
        Err(e) => return usage_error(&e.to_string()),
    };
    let mut identical = true;
    match chain {
        Some(Err(broken)) => {
            println!("chain broken: {broken}");
            identical = false;
        }
        Some(Ok(())) => {}
        None => println!("seals not checked: no server key (give --server-key or --data-dir)"),
    }
    match &report.divergence {
        None => println!(
            "identical ({} executions replayed in {:.1} ms)",
            report.executions_replayed,
            report.elapsed.as_secs_f64() * 1e3
        ),
        Some(divergence) => {
            println!("diverged: {divergence}");
            identical = false;
        }
    }
    if identical { ExitCode::SUCCESS } else { ExitCode::from(1) }
}
