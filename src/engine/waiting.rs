//! A run paused on client tool calls, as the type that proves it: only it can be answered, be
//! moved on by its timers, be saved with its container, or be interrupted.

use super::dispatch::Dispatcher;
use super::run::{ApprovalAnswer, Decided, EngineError, Moved, Progress, Run};
use crate::audit::Ending;
use crate::call::{FailureCode, ToolFailure};
use crate::sandbox::{Container, Outcome};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// A run waiting for client tool results.
#[derive(Debug)]
pub struct WaitingRun(pub(super) Run);

/// Answers checked against a waiting run's pending calls: exactly one for each.
#[derive(Debug)]
pub struct CheckedAnswers(Vec<(String, Result<String, ToolFailure>)>);

/// Decisions checked against a waiting run's held calls: each names one, at most once.
#[derive(Debug)]
pub struct CheckedDecisions(Vec<ApprovalAnswer>);

/// What is wrong with a set of answers to the pending client calls.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    #[error("tool_use_id {0:?} is not a pending call of this execution")]
    Unknown(String),
    #[error("tool_use_id {0:?} is answered twice")]
    Duplicate(String),
    #[error("pending calls are not answered: {}", .0.join(", "))]
    Missing(Vec<String>),
    #[error("this execution has no pending tool calls; it waits for approvals (POST /v1/executions/{{id}}/approvals)")]
    NoToolCalls,
    #[error("this execution has no calls waiting for approval; it waits for tool results")]
    NoApprovals,
    #[error("no decisions given")]
    NoDecisions,
    #[error("call {0:?} is not waiting for approval in this execution")]
    NotHeld(String),
}

impl WaitingRun {
    pub fn run(&self) -> &Run {
        &self.0
    }

    /// Checks that `answers` (tool_use id, result) answer exactly the pending client calls;
    /// only answers checked here can be given to [`WaitingRun::answer`].
    pub fn check_answers(
        &self,
        answers: Vec<(String, Result<String, ToolFailure>)>,
    ) -> Result<CheckedAnswers, AnswerError> {
        if self.0.client_calls.is_empty() {
            return Err(AnswerError::NoToolCalls);
        }
        check_ids(&self.0, answers.iter().map(|(id, _)| id.as_str()))?;
        Ok(CheckedAnswers(answers))
    }

    /// Checks decisions on held calls: some or all of them, each at most once.
    pub fn check_decisions(&self, decisions: Vec<ApprovalAnswer>) -> Result<CheckedDecisions, AnswerError> {
        if self.0.approval_calls.is_empty() {
            return Err(AnswerError::NoApprovals);
        }
        if decisions.is_empty() {
            return Err(AnswerError::NoDecisions);
        }
        // Sets, not scans: a gather can hold as many calls as `max_tool_calls` allows.
        let held: HashSet<&str> = self.0.approval_calls.iter().map(|c| c.id.as_str()).collect();
        let mut seen = HashSet::new();
        for decision in &decisions {
            if !held.contains(decision.id.as_str()) {
                return Err(AnswerError::NotHeld(decision.id.clone()));
            }
            if !seen.insert(decision.id.as_str()) {
                return Err(AnswerError::Duplicate(decision.id.clone()));
            }
        }
        Ok(CheckedDecisions(decisions))
    }
}

/// Whether `ids` answer exactly the pending client calls of `run`.
fn check_ids<'a>(run: &Run, ids: impl IntoIterator<Item = &'a str>) -> Result<(), AnswerError> {
    let pending: HashSet<&str> = run.client_calls.iter().map(|c| c.id.as_str()).collect();
    let mut seen = HashSet::new();
    for id in ids {
        if !pending.contains(id) {
            return Err(AnswerError::Unknown(id.to_owned()));
        }
        if !seen.insert(id) {
            return Err(AnswerError::Duplicate(id.to_owned()));
        }
    }
    let missing: Vec<String> =
        run.client_calls.iter().filter(|c| !seen.contains(c.id.as_str())).map(|c| c.id.clone()).collect();
    if missing.is_empty() { Ok(()) } else { Err(AnswerError::Missing(missing)) }
}

impl WaitingRun {
    /// The same run, with files to place in the working directory before the script resumes.
    pub fn with_uploads(mut self, uploads: Vec<super::files::Upload>) -> Self {
        self.0.uploads = uploads;
        self
    }

    /// Answers the pending client calls and goes on.
    pub async fn answer(
        self,
        container: &mut Container,
        answers: CheckedAnswers,
        dispatcher: &impl Dispatcher,
    ) -> Moved {
        let mut run = self.0;
        run.end_pause();
        let progress = run.answer_now(container, answers.0, dispatcher).await;
        run.into_moved(progress)
    }

    /// Carries out the approved calls and denies the others; the script goes on once nothing
    /// else waits (other held calls, client calls). `by` names who decided.
    pub async fn decide(
        self,
        container: &mut Container,
        decisions: CheckedDecisions,
        by: &str,
        dispatcher: &impl Dispatcher,
    ) -> Moved {
        let mut run = self.0;
        run.end_pause();
        let progress = run.approve_now(container, decisions.0, by, dispatcher).await;
        let progress = run.conclude(container, progress).await;
        run.into_moved(progress)
    }

    /// Moves the script on without the client's answers: calls past their deadline get
    /// `TimeoutError`, and timers of the script that fell due run.
    pub async fn expire(self, container: &mut Container, now: Instant, dispatcher: &impl Dispatcher) -> Moved {
        let mut run = self.0;
        run.end_pause();
        let progress = run.expire_now(container, now, dispatcher).await;
        run.into_moved(progress)
    }

    /// Ends the execution as the host ended it (shutdown, deletion), recording it with the
    /// outcome of its container's rollback when there is one.
    pub async fn interrupt(self, outcome: Option<&Outcome>, why: &str) -> (Run, Result<(), EngineError>) {
        let mut run = self.0;
        let recorded = match outcome {
            Some(outcome) => run.record_interrupted(outcome, why).await,
            None => Ok(()),
        };
        (run, recorded)
    }
}

impl Run {
    async fn answer_now(
        &mut self,
        container: &mut Container,
        answers: Vec<(String, Result<String, ToolFailure>)>,
        dispatcher: &impl Dispatcher,
    ) -> Result<Progress, EngineError> {
        let seq_of: HashMap<String, u64> = self.client_calls.drain(..).map(|c| (c.id, c.seq)).collect();
        for (id, result) in answers {
            let settled = self.settle(seq_of[&id], result, 1);
            self.held.push(settled);
        }
        let progress = self.go_on(container, dispatcher).await;
        self.conclude(container, progress).await
    }

    async fn expire_now(
        &mut self,
        container: &mut Container,
        now: Instant,
        dispatcher: &impl Dispatcher,
    ) -> Result<Progress, EngineError> {
        let mut results = std::mem::take(&mut self.held);
        let (due, waiting): (Vec<_>, Vec<_>) = self.client_calls.drain(..).partition(|c| c.deadline <= now);
        self.client_calls = waiting;
        for call in due {
            let failure = ToolFailure::new(
                FailureCode::Timeout,
                format!("no tool_result for {} within pending_timeout_ms={}", call.id, self.limits.pending_timeout_ms),
            );
            results.push(self.settle(call.seq, Err(failure), 1));
        }
        let (due, held): (Vec<_>, Vec<_>) = self.approval_calls.drain(..).partition(|c| c.deadline <= now);
        self.approval_calls = held;
        for call in due {
            let failure = self.decide(call.seq, Decided::Timeout, false);
            results.push(self.settle(call.seq, Err(failure), 0));
        }
        self.wake_at = None;
        let progress = match self.resume(container, results).await {
            Ok(step) => self.advance(container, step, dispatcher).await,
            Err(e) => Err(e),
        };
        self.conclude(container, progress).await
    }

    /// Records an execution the host ended (shutdown, deletion) and its rollback.
    async fn record_interrupted(&mut self, outcome: &Outcome, why: &str) -> Result<(), EngineError> {
        self.cancel_pending();
        self.finish(outcome, Ending::Interrupted, Some(why.to_owned()));
        self.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Limits;
    use crate::tools::Toolset;
    use std::sync::Arc;

    #[test]
    fn answers_must_match_the_pending_calls_exactly() {
        let context = crate::engine::run::RunContext {
            execution_id: "e".into(),
            container_id: "c".into(),
            owner: "o".into(),
            number: 1,
        };
        let mut run = Run::new(context, Toolset::default(), Limits::default(), Arc::new(crate::audit::Discard));
        for (id, seq) in [("a", 0), ("b", 1)] {
            run.client_calls.push(crate::engine::run::ClientCall {
                id: id.into(),
                seq,
                name: "t".into(),
                input: Default::default(),
                deadline: Instant::now(),
            });
        }
        assert_eq!(check_ids(&run, ["a", "b"]), Ok(()));
        assert_eq!(check_ids(&run, ["b", "a"]), Ok(()));
        assert_eq!(check_ids(&run, ["a"]), Err(AnswerError::Missing(vec!["b".into()])));
        assert_eq!(check_ids(&run, ["a", "a"]), Err(AnswerError::Duplicate("a".into())));
        assert_eq!(check_ids(&run, ["a", "z"]), Err(AnswerError::Unknown("z".into())));
    }
}
