//! A container to bytes and back: a checkpoint, the journal since, the execution waiting in it
//! and what the host keeps with it, sealed together (the format is in `sandbox::snapshot`).

use super::super::page_diff::PageDiff;
use super::super::snapshot::{
    CheckpointHeader, Decoded, Header, RunningHeader, SNAPSHOT_FORMAT, StepHeader, decode, encode,
};
use super::super::state::{MemoryGuard, Output};
use super::super::{SandboxError, Shared};
use super::journal::{Checkpoint, JournalStep, StepInput, replay_steps};
use super::numbering::Outstanding;
use super::{Container, Running};
use crate::sandbox::frames::MAX_ARGUMENT_BYTES_PER_EXECUTION;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use uuid::Uuid;

impl Container {
    /// The container as bytes: a checkpoint, the inputs since, and the execution in flight
    /// if one waits for tool results, sealed together with `host` (what the caller keeps
    /// with the container). Not possible while a script waits inside a nested event loop (a
    /// native frame would be lost).
    pub async fn snapshot(&mut self, host: serde_json::Value) -> Result<Vec<u8>, SandboxError> {
        if self.running.as_ref().is_some_and(|r| r.parked.is_some()) {
            return Err(SandboxError::NotSnapshottable("the script waits inside a nested event loop".into()));
        }
        if let Some(why) = &self.broken {
            return Err(SandboxError::RestoreFailed(why.clone()));
        }
        self.compact().await;
        let mut payload = Vec::new();
        let checkpoint = self.checkpoint.as_ref().map(|c| CheckpointHeader {
            memory_size: c.memory_size,
            clock_now_ns: c.clock_now_ns,
            random_state: c.random_state,
            diff_bytes: c.pages.as_bytes().len() as u64,
        });
        let step_headers = |steps: &[JournalStep], payload: &mut Vec<u8>| -> Vec<StepHeader> {
            steps
                .iter()
                .map(|step| {
                    payload.extend_from_slice(step.input.bytes());
                    StepHeader {
                        frame: matches!(step.input, StepInput::Frame(_)),
                        now_ns: step.now_ns,
                        response: step.response,
                        len: step.input.bytes().len() as u64,
                    }
                })
                .collect()
        };
        let journal = step_headers(&self.journal, &mut payload);
        let running = self.running.as_ref().map(|r| {
            let output = r.output.lock().unwrap_or_else(|p| p.into_inner());
            RunningHeader {
                limits: r.limits,
                run_time_us: r.run_time.as_micros() as u64,
                tool_calls: r.tool_calls,
                next_seq: r.next_seq,
                outstanding: r.outstanding.pairs(),
                argument_budget: r.argument_budget,
                steps: step_headers(&r.steps, &mut payload),
                stdout: output.stdout.text(),
                stderr: output.stderr.text(),
            }
        });
        let header = Header {
            format: SNAPSHOT_FORMAT,
            image_hash: self.shared.image_hash.clone(),
            container_id: self.id.to_string(),
            host,
            seed: self.seed,
            executions: self.executions,
            checkpoint,
            journal,
            running,
        };
        let diff = self.checkpoint.as_ref().map_or(&[][..], |c| c.pages.as_bytes());
        Ok(encode(&header, diff, &payload, &self.shared.config.snapshot_key))
    }

    /// A container rebuilt from a snapshot of container `taken_of`, under `id` (the same, or
    /// a new one for a fork); with the host data sealed in it.
    pub(crate) async fn restore(
        shared: Arc<Shared>,
        id: Uuid,
        taken_of: Uuid,
        bytes: &[u8],
    ) -> Result<(Self, serde_json::Value), SandboxError> {
        let Decoded { header, diff, frames: payload } = decode(bytes, &shared.config.snapshot_key, &shared.image_hash)
            .map_err(|e| match e.is_outdated() {
                true => SandboxError::SnapshotOutdated(e.to_string()),
                false => SandboxError::Snapshot(e.to_string()),
            })?;
        if header.container_id != taken_of.to_string() {
            return Err(SandboxError::Snapshot(format!(
                "the snapshot was taken of container {}, not {taken_of}",
                header.container_id
            )));
        }
        let damaged = |what: &str| SandboxError::Snapshot(format!("the snapshot is damaged: {what}"));
        let mut at = 0usize;
        let mut take = |len: usize| -> Result<Vec<u8>, SandboxError> {
            let bytes = payload.get(at..at + len).ok_or_else(|| damaged("payload too short"))?.to_vec();
            at += len;
            Ok(bytes)
        };
        let checkpoint = match &header.checkpoint {
            None => None,
            Some(c) => {
                let pages = PageDiff::from_bytes(diff).map_err(|e| damaged(&e.to_string()))?;
                Some(Arc::new(Checkpoint {
                    memory_size: c.memory_size,
                    pages,
                    clock_now_ns: c.clock_now_ns,
                    random_state: c.random_state,
                }))
            }
        };
        let mut steps = |headers: &[StepHeader]| -> Result<Vec<JournalStep>, SandboxError> {
            headers
                .iter()
                .map(|h| {
                    let bytes: Arc<[u8]> = take(usize::try_from(h.len).map_err(|_| damaged("step length"))?)?.into();
                    let input = if h.frame { StepInput::Frame(bytes) } else { StepInput::Answer(bytes) };
                    Ok(JournalStep { input, now_ns: h.now_ns, response: h.response })
                })
                .collect()
        };
        let journal = steps(&header.journal)?;
        let running_steps = header.running.as_ref().map(|r| steps(&r.steps)).transpose()?;
        let mut container = Self {
            id,
            seed: header.seed,
            shared,
            live: None,
            checkpoint,
            journal,
            journal_run_time: Duration::ZERO,
            last_compaction: Duration::ZERO,
            running: None,
            executions: header.executions,
            broken: None,
        };
        let mut live = container.rebuild().await?;
        if let (Some(r), Some(steps)) = (header.running, running_steps) {
            let maxima = *container.shared.maxima();
            replay_steps(&mut live.store, &live.exports, &steps, &maxima).await?;
            let mut output = Output::new(r.limits.max_output_bytes as usize);
            output.stdout.push(r.stdout.as_bytes());
            output.stderr.push(r.stderr.as_bytes());
            let output = Arc::new(Mutex::new(output));
            live.store.data_mut().output = output.clone();
            live.store.data_mut().memory_guard = MemoryGuard::new(r.limits.memory_bytes);
            container.running = Some(Running {
                limits: r.limits,
                output,
                steps,
                run_time: Duration::from_micros(r.run_time_us),
                tool_calls: r.tool_calls,
                next_seq: r.next_seq,
                outstanding: {
                    let mut outstanding = Outstanding::default();
                    for (guest, host) in r.outstanding {
                        outstanding.insert(guest, host);
                    }
                    outstanding
                },
                argument_budget: r.argument_budget.min(MAX_ARGUMENT_BYTES_PER_EXECUTION),
                parked: None,
            });
        }
        container.live = Some(live);
        Ok((container, header.host))
    }
}
