//! A container's and its executions' history, rebuilt from the records of its chain.

use super::{Event, Finished, ForkPoint, LedgerEntry, Record};

/// One execution put back together from its records.
#[derive(Debug, Clone)]
pub struct ExecutionHistory {
    pub execution_id: String,
    pub owner: String,
    pub number: u64,
    pub code: String,
    pub code_sha256: String,
    pub tools: serde_json::Value,
    pub limits: serde_json::Value,
    pub now_ns: u64,
    pub started_at: u64,
    /// (clock, seqs answered, files placed) of each resume, in order.
    pub steps: Vec<(u64, Vec<u64>, Vec<super::events::FileRecord>)>,
    /// The last state of each call, by seq.
    pub ledger: Vec<LedgerEntry>,
    pub finished: Option<Finished>,
    /// Files placed before the code ran.
    pub files: Vec<super::events::FileRecord>,
}

impl ExecutionHistory {
    /// Names of the tools the execution was given.
    pub fn tool_names(&self) -> std::collections::BTreeSet<String> {
        let tools = self.tools.as_array().map(Vec::as_slice).unwrap_or_default();
        tools.iter().filter_map(|t| t.get("name")?.as_str().map(str::to_owned)).collect()
    }
}

/// A container's history put back together from its chain.
#[derive(Debug, Clone)]
pub struct ContainerHistory {
    pub container_id: String,
    pub owner: String,
    pub seed: u64,
    pub image_hash: String,
    pub forked_from: Option<ForkPoint>,
    pub executions: Vec<ExecutionHistory>,
    /// Why the container was closed (deleted, expired), if it was.
    pub closed: Option<String>,
}

impl ContainerHistory {
    /// Rebuilds the history from a chain's records (which should be verified first).
    pub fn from_records(container_id: &str, records: &[Record]) -> Result<Self, String> {
        let mut history: Option<ContainerHistory> = None;
        for record in records {
            let event = record.event().map_err(|e| format!("record {}: {e}", record.seq))?;
            match event {
                Event::ContainerCreated { owner, seed, image_hash, forked_from } => {
                    let seed = seed.parse().map_err(|_| format!("record {}: bad seed", record.seq))?;
                    history = Some(ContainerHistory {
                        container_id: container_id.to_owned(),
                        owner,
                        seed,
                        image_hash,
                        forked_from,
                        executions: Vec::new(),
                        closed: None,
                    });
                }
                other => {
                    let history = history.as_mut().ok_or("the chain does not start with container_created")?;
                    history.apply(other, record.seq)?;
                }
            }
        }
        history.ok_or_else(|| format!("no records for container {container_id}"))
    }

    /// Applies `records` that continue the chain this history was built from (for example
    /// those written after a snapshot was taken).
    pub fn continue_with(&mut self, records: &[Record]) -> Result<(), String> {
        for record in records {
            let event = record.event().map_err(|e| format!("record {}: {e}", record.seq))?;
            self.apply(event, record.seq)?;
        }
        Ok(())
    }

    fn apply(&mut self, event: Event, seq: i64) -> Result<(), String> {
        let missing = |id: &str| format!("record {seq}: execution {id} was not started");
        match event {
            Event::ExecutionStarted {
                execution_id,
                owner,
                number,
                code,
                code_sha256,
                tools,
                limits,
                now_ns,
                started_at,
                files,
            } => {
                self.executions.push(ExecutionHistory {
                    execution_id,
                    owner,
                    number,
                    code,
                    code_sha256,
                    tools,
                    limits,
                    now_ns,
                    started_at,
                    steps: Vec::new(),
                    ledger: Vec::new(),
                    finished: None,
                    files,
                });
            }
            Event::Step { execution_id, now_ns, answered, files } => {
                let execution = self.execution_mut(&execution_id).ok_or_else(|| missing(&execution_id))?;
                execution.steps.push((now_ns, answered, files));
            }
            Event::ToolCall { execution_id, call } => {
                let execution = self.execution_mut(&execution_id).ok_or_else(|| missing(&execution_id))?;
                // Calls are recorded in seq order: a binary search finds an update's entry.
                let at = execution.ledger.partition_point(|c| c.seq < call.seq);
                match execution.ledger.get_mut(at) {
                    Some(existing) if existing.seq == call.seq => *existing = call,
                    _ => execution.ledger.insert(at, call),
                }
            }
            Event::ExecutionFinished(finished) => {
                let id = finished.execution_id.clone();
                let execution = self.execution_mut(&id).ok_or_else(|| missing(&id))?;
                execution.finished = Some(finished);
            }
            Event::ContainerClosed { reason } => self.closed = Some(reason),
            // The model's side of a Messages turn: audited, not part of the container's state.
            Event::ModelCall(_) => {}
            Event::ContainerCreated { .. } => return Err(format!("record {seq}: a second container_created")),
        }
        Ok(())
    }

    fn execution_mut(&mut self, id: &str) -> Option<&mut ExecutionHistory> {
        self.executions.iter_mut().rev().find(|e| e.execution_id == id)
    }

    pub fn execution(&self, id: &str) -> Option<&ExecutionHistory> {
        self.executions.iter().find(|e| e.execution_id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::chain::tests::{chain, events};

    #[test]
    fn history_is_rebuilt_from_records() {
        let records = chain(&events());
        let history = ContainerHistory::from_records("c", &records).unwrap();
        assert_eq!(history.seed, 42);
        assert_eq!(history.executions[0].steps, vec![(9, vec![0], vec![])]);
    }
}
