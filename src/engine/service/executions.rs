//! Executions: started, answered with client tool results, published to readers after every
//! step, kept in memory while they live, and their tokens counted afterwards.

use super::*;

impl Service {
    /// Runs a new execution until it completes, fails or needs client tool results.
    pub async fn create_execution(&self, owner: &Owner, request: NewExecution) -> Result<ExecutionView, ServiceError> {
        let (this, owner) = (self.clone(), owner.clone());
        self.detached(async move { this.create_execution_now(&owner, request).await }).await
    }

    pub(super) async fn create_execution_now(
        &self,
        owner: &Owner,
        request: NewExecution,
    ) -> Result<ExecutionView, ServiceError> {
        if self.inner.shutting_down.load(Ordering::Relaxed) {
            return Err(ServiceError::ShuttingDown);
        }
        if request.code.len() > MAX_CODE_BYTES {
            return Err(ServiceError::InvalidRequest(format!("code is longer than {MAX_CODE_BYTES} bytes")));
        }
        let toolset = self.toolset(owner, &request)?;
        self.check_waiting_quota(owner)?;
        let limits = self
            .inner
            .config
            .defaults
            .with_overrides(&request.limits, &self.inner.config.maxima)
            .map_err(|e| ServiceError::InvalidRequest(e.to_string()))?;
        let uploads = self.uploads_for(owner, &request.files, limits.storage_bytes).await?;
        let placed_files = !uploads.is_empty();
        let (entry, mut slot) = match request.container {
            Some(id) => {
                let running = || ServiceError::Conflict(format!("container {id} is running an execution"));
                self.held_slot(owner, id, running).await?
            }
            None => {
                let entry = self.new_container(owner).await?;
                let slot = entry.slot.clone().lock_owned().await;
                if entry.is_retired() {
                    return Err(moved(entry.id));
                }
                (entry, slot)
            }
        };
        if let Some(waiting) = &slot.waiting {
            return Err(ServiceError::Conflict(format!(
                "container {} has execution {} waiting for tool results",
                entry.id,
                waiting.run().id()
            )));
        }
        self.touch(&entry);
        let id = format!("exec_{}", Uuid::new_v4().simple());
        let context = RunContext {
            execution_id: id.clone(),
            container_id: entry.id.to_string(),
            owner: owner.clone(),
            number: entry.started.fetch_add(1, Ordering::Relaxed) + 1,
        };
        let run = Run::new(context, toolset, limits, self.inner.recorder.clone())
            .with_trace_parent(request.trace_parent)
            .with_uploads(uploads);
        let view = ExecutionView {
            id: id.clone(),
            container_id: entry.id,
            container_expires_at: self.expires_at(&entry),
            code: request.code.clone(),
            status: ExecutionStatus::Running,
            tool_uses: Vec::new(),
            approval_requests: Vec::new(),
            outcome: None,
            error: None,
            usage: Usage::default(),
            ledger: Vec::new(),
            created_at: SystemTime::now(),
            output_files: Vec::new(),
        };
        let execution = Arc::new(ExecutionEntry { owner: owner.clone(), view: Mutex::new(view) });
        self.remember_execution(id, execution.clone());
        let dispatcher = ServiceDispatcher::new(&self.inner.config);
        let mut moved = run.start(&mut slot.container, &request.code, &dispatcher).await;
        self.keep_run_outputs(&entry, &mut moved).await;
        let view = self.after_progress(&entry, &mut slot, &execution, moved);
        // A container given files is saved at once: bringing it back then never needs them
        // from the store again (their owner may delete them).
        self.save_after_execution(&entry, &mut slot, placed_files).await;
        Ok(view)
    }

    /// Refuses a new execution to a key with as many waiting for tool results as it may have.
    pub(super) fn check_waiting_quota(&self, owner: &Owner) -> Result<(), ServiceError> {
        let waiting = lock(&self.inner.live_executions)
            .values()
            .filter(|e| &e.owner == owner && lock(&e.view).status == ExecutionStatus::RequiresAction)
            .count();
        if waiting >= self.inner.config.quotas.waiting_executions {
            return Err(ServiceError::Quota(format!(
                "this API key has {waiting} executions waiting for tool results, the most it may"
            )));
        }
        Ok(())
    }

    /// An execution waiting for client tool results is saved at once, so it survives a
    /// restart (or another node can take the answer); others when configured so.
    pub(super) async fn save_after_execution(&self, entry: &ContainerEntry, slot: &mut Slot, placed_files: bool) {
        entry.dirty.store(true, Ordering::Relaxed);
        if (slot.waiting.is_some() || placed_files || self.inner.config.snapshot_every_execution)
            && let Err(e) = self.persist(entry, slot).await
        {
            tracing::warn!(container = %entry.id, error = %e, "could not save a container after an execution");
        }
    }

    /// Answers every pending client call of an execution and runs it on.
    pub async fn submit_tool_results(
        &self,
        owner: &Owner,
        id: &str,
        answers: Vec<(String, Result<String, ToolFailure>)>,
    ) -> Result<ExecutionView, ServiceError> {
        self.submit_tool_results_with_files(owner, id, answers, Vec::new()).await
    }

    /// [`Service::submit_tool_results`], with files (by id) put into the container's working
    /// directory before the script resumes, as `container_upload` blocks beside tool results.
    pub async fn submit_tool_results_with_files(
        &self,
        owner: &Owner,
        id: &str,
        answers: Vec<(String, Result<String, ToolFailure>)>,
        files: Vec<String>,
    ) -> Result<ExecutionView, ServiceError> {
        let (this, owner, id) = (self.clone(), owner.clone(), id.to_owned());
        self.detached(async move { this.reply_now(&owner, &id, Reply::ToolResults { answers, files }).await }).await
    }

    /// Approves or denies calls held for approval: approved ones are carried out, denied ones
    /// raise `ToolDeniedError` in the script, which runs on once nothing else waits. `by`
    /// (who decided, as the ledger records it) defaults to the key's owner id.
    pub async fn decide_approvals(
        &self,
        owner: &Owner,
        id: &str,
        decisions: Vec<ApprovalAnswer>,
        by: Option<String>,
    ) -> Result<ExecutionView, ServiceError> {
        let (this, owner, id) = (self.clone(), owner.clone(), id.to_owned());
        let by = by.unwrap_or_else(|| owner.clone());
        self.detached(async move { this.reply_now(&owner, &id, Reply::Approvals { decisions, by }).await }).await
    }

    pub(super) async fn reply_now(&self, owner: &Owner, id: &str, reply: Reply) -> Result<ExecutionView, ServiceError> {
        let not_waiting = || ServiceError::Conflict(format!("execution {id} is not waiting for {}", reply.what()));
        let placed_files = matches!(&reply, Reply::ToolResults { files, .. } if !files.is_empty());
        let container_id = match self.find_execution(owner, id) {
            Ok(execution) => lock(&execution.view).container_id,
            Err(not_here) => {
                // Saved waiting in a container this node does not hold: bring it here.
                let store = self.inner.store.as_ref().ok_or(not_here)?;
                let (container_id, stored_owner) =
                    store.container_of(id).await?.ok_or_else(|| ServiceError::NotFound(format!("execution {id}")))?;
                if &stored_owner != owner {
                    return Err(ServiceError::NotFound(format!("execution {id}")));
                }
                container_id
                    .parse()
                    .map_err(|_| ServiceError::Internal("a stored container id is not a UUID".into()))?
            }
        };
        // Not waiting behind a running script: a request that would only queue is refused.
        let (entry, mut slot) = self.held_slot(owner, container_id, not_waiting).await?;
        let execution = self.find_execution(owner, id)?;
        let waiting = match slot.waiting.take() {
            Some(waiting) if waiting.run().id() == id => waiting,
            other => {
                slot.waiting = other;
                return Err(not_waiting());
            }
        };
        let dispatcher = ServiceDispatcher::new(&self.inner.config);
        // Checked before anything moves: a wrong id changes nothing.
        let moved = match reply {
            Reply::ToolResults { answers, files } => match waiting.check_answers(answers) {
                Ok(answers) => {
                    if !files.is_empty() && !waiting.run().approval_calls.is_empty() {
                        slot.waiting = Some(waiting);
                        return Err(ServiceError::InvalidRequest(
                            "files come with the tool results that resume the script; calls of this execution \
                             still wait for approval, so send the files once they are decided"
                                .into(),
                        ));
                    }
                    let storage_bytes = waiting.run().limits().storage_bytes;
                    let uploads = match self.uploads_for(owner, &files, storage_bytes).await {
                        Ok(uploads) => uploads,
                        Err(e) => {
                            slot.waiting = Some(waiting);
                            return Err(e);
                        }
                    };
                    self.touch(&entry);
                    waiting.with_uploads(uploads).answer(&mut slot.container, answers, &dispatcher).await
                }
                Err(e) => {
                    slot.waiting = Some(waiting);
                    return Err(ServiceError::InvalidRequest(e.to_string()));
                }
            },
            Reply::Approvals { decisions, by } => match waiting.check_decisions(decisions) {
                Ok(decisions) => {
                    self.touch(&entry);
                    waiting.decide(&mut slot.container, decisions, &by, &dispatcher).await
                }
                Err(e) => {
                    slot.waiting = Some(waiting);
                    return Err(ServiceError::InvalidRequest(e.to_string()));
                }
            },
        };
        let mut moved = moved;
        self.keep_run_outputs(&entry, &mut moved).await;
        let view = self.after_progress(&entry, &mut slot, &execution, moved);
        self.save_after_execution(&entry, &mut slot, placed_files).await;
        Ok(view)
    }

    pub(super) fn find_execution(&self, owner: &Owner, id: &str) -> Result<Arc<ExecutionEntry>, ServiceError> {
        let live = lock(&self.inner.live_executions).get(id).cloned();
        live.or_else(|| lock(&self.inner.finished_executions).get(&id.to_owned()).cloned())
            .filter(|e| &e.owner == owner)
            .ok_or_else(|| ServiceError::NotFound(format!("execution {id}")))
    }

    /// Keeps a running (or waiting) execution where readers and `tool_results` find it.
    pub(super) fn remember_execution(&self, id: String, entry: Arc<ExecutionEntry>) {
        lock(&self.inner.live_executions).insert(id, entry);
    }

    /// Moves a finished execution among the recent ones (which may forget it: the audit store
    /// has it).
    pub(super) fn retire_execution(&self, id: &str) {
        let entry = lock(&self.inner.live_executions).remove(id);
        if let Some(entry) = entry {
            let weight = view_bytes(&lock(&entry.view));
            lock(&self.inner.finished_executions).insert(id.to_owned(), entry, weight);
        }
    }

    /// Publishes where the execution stands, keeps a waiting run in the slot, and arms the
    /// timer that moves it on if the client does not answer in time.
    /// Keeps a finished execution's output files in the Files store before anyone hears of
    /// them, and drops their bytes from the outcome (views keep only their records).
    pub(super) async fn keep_run_outputs(&self, entry: &ContainerEntry, moved: &mut Moved) {
        let Moved::Finished { run, outcome } = moved else { return };
        if outcome.files.is_empty() {
            return;
        }
        let files = std::mem::take(&mut outcome.files);
        let (kept, failure) =
            self.keep_outputs(&entry.owner, &entry.id.to_string(), run.id(), run.output_files(), &files).await;
        if let Some(e) = failure {
            tracing::warn!(execution = %run.id(), error = %e, "could not keep an execution's output files");
            let left = files.len() - kept.len();
            outcome.stderr.push_str(&format!("[sluice: {left} output files were not kept: {e}]\n"));
        }
        run.keep_only_outputs(&kept);
    }

    pub(super) fn after_progress(
        &self,
        entry: &Arc<ContainerEntry>,
        slot: &mut Slot,
        execution: &ExecutionEntry,
        moved: Moved,
    ) -> ExecutionView {
        self.touch(entry);
        let mut view = lock(&execution.view);
        view.container_expires_at = self.expires_at(entry);
        let run = match &moved {
            Moved::Finished { run, .. } | Moved::Failed { run, .. } => run,
            Moved::Waiting(waiting) => waiting.run(),
        };
        view.usage = run.usage().clone();
        view.ledger = run.ledger().to_vec();
        match moved {
            Moved::Finished { run, outcome } => {
                let outcome = *outcome;
                let metrics = &self.inner.metrics;
                for call in run.ledger() {
                    metrics.tool_call(call.status.name());
                }
                metrics.execution_time(outcome.run_time);
                view.tool_uses.clear();
                view.approval_requests.clear();
                view.status = match &outcome.stop {
                    None => ExecutionStatus::Completed,
                    Some(stop) => {
                        metrics.limit_hit(stop.code());
                        view.error =
                            Some(ExecutionError { kind: stop.code().into(), message: stop.message(run.limits()) });
                        ExecutionStatus::Failed
                    }
                };
                metrics.execution(if view.status == ExecutionStatus::Completed { "completed" } else { "failed" });
                self.count_tokens_later(&run, &outcome, view.created_at);
                view.output_files = run.output_files().to_vec();
                view.outcome = Some(outcome);
            }
            Moved::Waiting(waiting) => {
                self.inner.metrics.execution("requires_action");
                view.status = ExecutionStatus::RequiresAction;
                let run = waiting.run();
                (view.tool_uses, view.approval_requests) = waiting_on(run);
                if let Some(deadline) = run.next_deadline() {
                    self.arm_timer(entry.clone(), run.id().to_owned(), deadline);
                }
                slot.waiting = Some(waiting);
            }
            Moved::Failed { error, .. } => {
                view.status = ExecutionStatus::Failed;
                view.tool_uses.clear();
                view.approval_requests.clear();
                view.error = Some(ExecutionError {
                    kind: crate::audit::Ending::InternalError.as_str().into(),
                    message: error.to_string(),
                });
                self.inner.metrics.execution("failed");
            }
        }
        let published = view.clone();
        // The view's lock is let go first: readers of the index take the index, then views.
        drop(view);
        if published.status != ExecutionStatus::RequiresAction {
            self.retire_execution(&published.id);
        }
        published
    }

    /// Tokenizing what stayed in and what came out takes milliseconds for large results, so
    /// it happens after the answer, into the executions index: one execution at a time, at
    /// a bounded cost each (see [`super::tokens`]); when too many wait, only estimates are
    /// recorded. The execution's trace goes out then too, with the counts.
    pub(super) fn count_tokens_later(&self, run: &Run, outcome: &Outcome, started: SystemTime) {
        let store = self.inner.store.clone();
        let trace = self.inner.config.otlp.clone().map(|exporter| (exporter, FinishedTrace::of(run, outcome, started)));
        if store.is_none() && trace.is_none() {
            return;
        }
        let inside = crate::engine::tokens::Sample::of(run.ledger().iter().filter_map(|c| c.result.as_deref()));
        let returned = [outcome.stdout.as_str(), outcome.stderr.as_str(), outcome.value_repr.as_deref().unwrap_or("")];
        let returned = crate::engine::tokens::Sample::of(returned);
        let id = run.id.clone();
        let queue = self.inner.token_queue.clone();
        let turn = self.inner.token_turn.clone();
        tokio::spawn(async move {
            // Queued: counted in turn. Not queued (too many wait): estimated at once.
            let place = queue.try_acquire_owned().ok();
            let turn = match &place {
                Some(_) => turn.acquire_owned().await.ok(),
                None => None,
            };
            let (inside, returned) = if turn.is_some() {
                match tokio::task::spawn_blocking(move || (inside.count(), returned.count())).await {
                    Ok(counted) => counted,
                    Err(_) => return,
                }
            } else {
                (inside.estimate(), returned.estimate())
            };
            let estimated = inside.estimated || returned.estimated;
            if let Some((exporter, trace)) = trace {
                exporter.export(trace.request((inside.tokens, returned.tokens, estimated)));
            }
            let Some(store) = store else { return };
            if let Err(e) = store.set_tokens(&id, inside.tokens as i64, returned.tokens as i64, estimated).await {
                tracing::warn!(execution = %id, error = %e, "could not record token counts");
            }
        });
    }
}

/// What a finished execution's trace is built from, kept past the run (results are shared,
/// not copied).
struct FinishedTrace {
    parent: Option<crate::engine::trace::TraceParent>,
    execution_id: String,
    container_id: String,
    started_ms: u64,
    finished_ms: u64,
    outcome: &'static str,
    return_code: i32,
    ledger: Vec<LedgerEntry>,
    pauses: Vec<crate::engine::trace::Pause>,
    usage: Usage,
    executors: HashMap<String, &'static str>,
}

impl FinishedTrace {
    fn of(run: &Run, outcome: &Outcome, started: SystemTime) -> Self {
        let executors =
            run.toolset.tools().map(|tool| (tool.name().to_owned(), tool.definition.executor.kind())).collect();
        let ending = match (&outcome.stop, &outcome.error) {
            (Some(stop), _) => stop.code(),
            (None, Some(_)) => crate::audit::Ending::PythonError.as_str(),
            (None, None) => crate::audit::Ending::Completed.as_str(),
        };
        Self {
            parent: run.trace_parent(),
            execution_id: run.id.clone(),
            container_id: run.container_id.clone(),
            started_ms: crate::audit::unix_ms(started),
            finished_ms: crate::audit::unix_ms(SystemTime::now()),
            outcome: ending,
            return_code: outcome.return_code,
            ledger: run.ledger().to_vec(),
            pauses: run.pauses_on_caller().to_vec(),
            usage: run.usage().clone(),
            executors,
        }
    }

    fn request(&self, tokens: (u64, u64, bool)) -> serde_json::Value {
        let executor_of = |tool: &str| self.executors.get(tool).copied().unwrap_or("client");
        crate::engine::trace::ExecutionTrace {
            parent: self.parent,
            execution_id: &self.execution_id,
            container_id: &self.container_id,
            started_ms: self.started_ms,
            finished_ms: self.finished_ms,
            outcome: self.outcome,
            return_code: self.return_code,
            ledger: &self.ledger,
            pauses: &self.pauses,
            usage: &self.usage,
            tokens,
            executor_of: &executor_of,
        }
        .request()
    }
}

/// What the API caller gives an execution that waits on it.
pub(super) enum Reply {
    /// A result for every pending client call.
    ToolResults { answers: Vec<(String, Result<String, ToolFailure>)>, files: Vec<String> },
    /// Decisions on calls held for approval, and who made them.
    Approvals { decisions: Vec<ApprovalAnswer>, by: String },
}

impl Reply {
    fn what(&self) -> &'static str {
        match self {
            Reply::ToolResults { .. } => "tool results",
            Reply::Approvals { .. } => "approvals",
        }
    }
}
