//! Recovery at start: executions the last process left running are marked interrupted,
//! with their calls in flight; unreadable ones are logged and marked all the same.

use super::*;

impl Service {
    /// Marks executions that were running when the process holding them stopped as
    /// interrupted, with their calls in flight; nothing is run again. An execution that was
    /// saved waiting for client tool results is not cut off: it resumes when answered.
    /// Returns how many were marked.
    ///
    /// With `shared_as` (this node's name, when several nodes share the store) only
    /// containers whose lease has lapsed are touched: another live node may be running the
    /// rest. A single node owns every lease, so stale ones from its last life are cleared.
    pub async fn recover_interrupted(
        store: &Store,
        shared_as: Option<&str>,
        lease_ttl: Duration,
    ) -> Result<usize, ServiceError> {
        if shared_as.is_none() {
            store.clear_leases().await?;
        }
        let mut marked = 0;
        for (container_id, execution_id) in store.unfinished_executions().await? {
            if let Some(node) = shared_as {
                let until = crate::audit::unix_ms(SystemTime::now() + lease_ttl) as i64;
                if !store.acquire_lease(&container_id, node, until).await? {
                    continue;
                }
            }
            let stored = store.load_container(&container_id).await?;
            let waiting = stored.is_some_and(|s| s.waiting_execution.as_deref() == Some(execution_id.as_str()));
            if !waiting {
                // One unreadable history must not keep the service from starting: it is
                // logged and marked, and the rest are recovered.
                match Service::recover_execution(store, &container_id, &execution_id).await {
                    Ok(()) => marked += 1,
                    Err(e) => tracing::error!(
                        container = %container_id, execution = %execution_id, error = %e,
                        "could not mark an interrupted execution"
                    ),
                }
            }
            if let Some(node) = shared_as {
                store.release_lease(&container_id, node).await?;
            }
        }
        Ok(marked)
    }

    /// Records one execution as interrupted, with its calls in flight cancelled. Records of
    /// it that cannot be read are logged and it is marked all the same, without its calls.
    pub(super) async fn recover_execution(
        store: &Store,
        container_id: &str,
        execution_id: &str,
    ) -> Result<(), ServiceError> {
        let records = store.execution_records(container_id, execution_id, i64::MAX).await?;
        let mut history = ContainerHistory {
            container_id: container_id.to_owned(),
            owner: String::new(),
            seed: 0,
            image_hash: String::new(),
            forked_from: None,
            executions: Vec::new(),
            closed: None,
        };
        let read = history.continue_with(&records);
        let execution = match (&read, history.execution(execution_id)) {
            (Ok(()), Some(execution)) if execution.finished.is_some() => return Ok(()),
            (Ok(()), Some(execution)) => Some(execution),
            (Ok(()), None) => return Ok(()),
            (Err(why), _) => {
                tracing::error!(container = %container_id, execution = %execution_id, error = %why,
                    "an interrupted execution's records cannot be read; marking it without them");
                None
            }
        };
        let now = crate::audit::unix_ms(SystemTime::now());
        let ledger = execution.map_or(&[][..], |e| e.ledger.as_slice());
        let known = execution.map(|e| e.tool_names()).unwrap_or_default();
        let mut auto_counts = crate::audit::AutoCounts::default();
        for call in ledger {
            if known.contains(&call.tool) {
                *auto_counts.calls_per_tool.entry(call.tool.clone()).or_default() += 1;
            } else {
                auto_counts.unknown_tool_calls += 1;
            }
        }
        let usage = Usage { tool_calls: ledger.len() as u64, ..Usage::default() };
        let error_message = match &read {
            Ok(()) => "the process running the execution stopped before it finished".to_owned(),
            Err(why) => format!("the process running the execution stopped; its records could not be read: {why}"),
        };
        let mut events = Vec::new();
        for call in ledger.iter().filter(|c| !c.status.is_final()) {
            let mut call = call.clone();
            call.status = CallStatus::Cancelled;
            call.error_code = Some(crate::call::FailureCode::Interrupted);
            call.error_message =
                Some("the process running the execution stopped; the call's outcome is unknown".into());
            call.finished_at = Some(now);
            events.push(Event::ToolCall { execution_id: execution_id.to_owned(), call });
        }
        events.push(Event::ExecutionFinished(crate::audit::Finished {
            execution_id: execution_id.to_owned(),
            status: crate::audit::FinishStatus::Failed,
            outcome: crate::audit::Ending::Interrupted,
            return_code: i64::from(crate::sandbox::STOPPED_RETURN_CODE),
            stdout: String::new(),
            stderr: String::new(),
            value_repr: None,
            exception: None,
            error_message: Some(error_message),
            counts: Default::default(),
            auto_counts,
            usage,
            finished_at: now,
            files: Vec::new(),
        }));
        store.append(container_id, &events).await?;
        Ok(())
    }
}
