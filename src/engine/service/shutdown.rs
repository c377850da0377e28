//! Stopping: refusing new work, stopping running scripts, saving every container within a
//! budget, and ending waiting executions when there is no store to keep them.

use super::*;

impl Service {
    /// Ends an execution that waits for client tools, rolling its container back.
    pub(super) async fn interrupt_waiting(&self, slot: &mut Slot, why: &str) {
        let Some(waiting) = slot.waiting.take() else { return };
        let outcome = slot.container.abort(why).await.ok();
        let (run, recorded) = waiting.interrupt(outcome.as_ref(), why).await;
        if let Err(e) = recorded {
            tracing::error!(execution = %run.id(), error = %e, "could not record an interrupted execution");
        }
        let execution = lock(&self.inner.live_executions).get(run.id()).cloned();
        if let Some(execution) = execution {
            let mut view = lock(&execution.view);
            view.status = ExecutionStatus::Failed;
            view.tool_uses.clear();
            view.error = Some(ExecutionError {
                kind: crate::audit::Ending::Interrupted.as_str().into(),
                message: why.to_owned(),
            });
            view.outcome = outcome;
            view.ledger = run.ledger().to_vec();
            self.inner.metrics.execution("failed");
        }
        self.retire_execution(run.id());
    }

    /// Refuses new executions and containers from now on (the start of a shutdown).
    pub fn refuse_new_work(&self) {
        self.inner.shutting_down.store(true, Ordering::Relaxed);
    }

    /// Stops every script running now: each ends `interrupted`, its container rolled back.
    pub fn interrupt_running(&self) {
        self.inner.sandbox.halt_running();
    }

    /// Refuses new work, then saves every container to the store (an execution waiting for
    /// client tools resumes after the restart) and hands back its lease, within
    /// [`SHUTDOWN_SAVE_BUDGET`]: a container still busy after that is left as it is (its state
    /// is rebuilt from the audit trail at its next use). Without a store, executions waiting
    /// for client tools end as interrupted.
    pub async fn shutdown(&self) {
        self.refuse_new_work();
        let give_up = tokio::time::Instant::now() + SHUTDOWN_SAVE_BUDGET;
        let entries: Vec<_> = lock(&self.inner.containers).values().cloned().collect();
        let mut left = 0;
        for entry in entries {
            let saved = tokio::time::timeout_at(give_up, async {
                let mut slot = entry.slot.lock().await;
                if entry.is_retired() {
                    return;
                }
                if self.inner.store.is_none() {
                    self.interrupt_waiting(&mut slot, "the service shut down").await;
                    return;
                }
                if let Err(e) = self.unload(&entry, &mut slot).await {
                    tracing::error!(container = %entry.id, error = %e, "could not save a container at shutdown");
                    self.interrupt_waiting(&mut slot, "the service shut down and could not save the container").await;
                }
            })
            .await;
            left += usize::from(saved.is_err());
        }
        if left > 0 {
            tracing::warn!(containers = left, "not saved at shutdown in time: they are rebuilt from the audit trail");
        }
        // No execution runs any more: the MCP servers' sessions (and children) can end.
        self.inner.config.mcp.shutdown().await;
    }
}
