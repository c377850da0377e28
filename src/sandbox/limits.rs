//! Resource limits of one execution: safe defaults, per-request overrides, server maxima.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Script run time per execution (Anthropic allows 90 s per cell).
pub(crate) const DEFAULT_TIME_MS: u64 = 90_000;
pub(crate) const MAX_TIME_MS: u64 = 600_000;
/// Linear memory of a container; the interpreter alone takes about 30 MiB.
pub(crate) const DEFAULT_MEMORY_BYTES: u64 = 256 << 20;
pub(crate) const MIN_MEMORY_BYTES: u64 = 64 << 20;
pub(crate) const MAX_MEMORY_BYTES: u64 = 4 << 30;
/// Each of stdout and stderr is cut here, with a visible marker line.
pub(crate) const DEFAULT_MAX_OUTPUT_BYTES: u64 = 1 << 20;
pub(crate) const MAX_OUTPUT_BYTES: u64 = 64 << 20;
/// Tool calls one execution may make.
pub(crate) const DEFAULT_MAX_TOOL_CALLS: u64 = 2_000;
pub(crate) const MAX_TOOL_CALLS: u64 = 100_000;
/// How long a client tool may stay unanswered before the script gets `TimeoutError`.
pub(crate) const DEFAULT_PENDING_TIMEOUT_MS: u64 = 270_000;
pub(crate) const MAX_PENDING_TIMEOUT_MS: u64 = 3_600_000;

/// Bytes a container's files may hold (its `/workspace` and `/tmp`). Files travel between
/// host and guest inside JSON frames (base64), so the maximum stays well inside the largest
/// frame the host reads.
pub(crate) const DEFAULT_STORAGE_BYTES: u64 = 32 << 20;
pub(crate) const MAX_STORAGE_BYTES: u64 = 40 << 20;

/// How far an operator may raise the maxima (`--max-limit`): wasm32 memory ends at 4 GiB.
pub(crate) const OPERATOR_CEILING: Limits = Limits {
    time_ms: 86_400_000,
    memory_bytes: 4 << 30,
    max_output_bytes: 256 << 20,
    max_tool_calls: 1_000_000,
    pending_timeout_ms: 86_400_000,
    storage_bytes: MAX_STORAGE_BYTES,
};

/// The limits an execution runs under, all resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub time_ms: u64,
    pub memory_bytes: u64,
    pub max_output_bytes: u64,
    pub max_tool_calls: u64,
    pub pending_timeout_ms: u64,
    /// Absent from executions recorded before files existed: they had none.
    #[serde(default = "default_storage_bytes")]
    pub storage_bytes: u64,
}

fn default_storage_bytes() -> u64 {
    DEFAULT_STORAGE_BYTES
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            time_ms: DEFAULT_TIME_MS,
            memory_bytes: DEFAULT_MEMORY_BYTES,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            max_tool_calls: DEFAULT_MAX_TOOL_CALLS,
            pending_timeout_ms: DEFAULT_PENDING_TIMEOUT_MS,
            storage_bytes: DEFAULT_STORAGE_BYTES,
        }
    }
}

impl Limits {
    /// The largest values a request may ask for on this server.
    pub const fn server_maxima() -> Self {
        Self {
            time_ms: MAX_TIME_MS,
            memory_bytes: MAX_MEMORY_BYTES,
            max_output_bytes: MAX_OUTPUT_BYTES,
            max_tool_calls: MAX_TOOL_CALLS,
            pending_timeout_ms: MAX_PENDING_TIMEOUT_MS,
            storage_bytes: MAX_STORAGE_BYTES,
        }
    }

    /// The highest maxima an operator may configure.
    pub const fn operator_ceiling() -> Self {
        OPERATOR_CEILING
    }

    /// Each limit no higher than the same one of `maxima` (defaults under lowered maxima).
    pub fn clamped_to(self, maxima: &Limits) -> Self {
        Self {
            time_ms: self.time_ms.min(maxima.time_ms),
            memory_bytes: self.memory_bytes.min(maxima.memory_bytes),
            max_output_bytes: self.max_output_bytes.min(maxima.max_output_bytes),
            max_tool_calls: self.max_tool_calls.min(maxima.max_tool_calls),
            pending_timeout_ms: self.pending_timeout_ms.min(maxima.pending_timeout_ms),
            storage_bytes: self.storage_bytes.min(maxima.storage_bytes),
        }
    }

    pub fn time(&self) -> Duration {
        Duration::from_millis(self.time_ms)
    }

    pub fn pending_timeout(&self) -> Duration {
        Duration::from_millis(self.pending_timeout_ms)
    }

    /// Applies a request's overrides, refusing values outside `[minimum, maxima]`.
    pub fn with_overrides(mut self, overrides: &LimitOverrides, maxima: &Limits) -> Result<Self, LimitError> {
        let fields: [(&'static str, Option<u64>, &mut u64, u64, u64); 6] = [
            ("time_ms", overrides.time_ms, &mut self.time_ms, 1, maxima.time_ms),
            ("memory_bytes", overrides.memory_bytes, &mut self.memory_bytes, MIN_MEMORY_BYTES, maxima.memory_bytes),
            ("max_output_bytes", overrides.max_output_bytes, &mut self.max_output_bytes, 1, maxima.max_output_bytes),
            ("max_tool_calls", overrides.max_tool_calls, &mut self.max_tool_calls, 0, maxima.max_tool_calls),
            (
                "pending_timeout_ms",
                overrides.pending_timeout_ms,
                &mut self.pending_timeout_ms,
                1,
                maxima.pending_timeout_ms,
            ),
            ("storage_bytes", overrides.storage_bytes, &mut self.storage_bytes, 0, maxima.storage_bytes),
        ];
        for (name, requested, slot, min, max) in fields {
            if let Some(value) = requested {
                if value < min || value > max {
                    return Err(LimitError { name, value, min, max });
                }
                *slot = value;
            }
        }
        Ok(self)
    }
}

/// What a request or the CLI asks for; unset fields keep the defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitOverrides {
    pub time_ms: Option<u64>,
    pub memory_bytes: Option<u64>,
    pub max_output_bytes: Option<u64>,
    pub max_tool_calls: Option<u64>,
    pub pending_timeout_ms: Option<u64>,
    pub storage_bytes: Option<u64>,
}

impl LimitOverrides {
    /// Names a limit can be set by (the CLI's `--limit KEY=VALUE`, a request's `limits`).
    pub const NAMES: &'static [&'static str] =
        &["time_ms", "memory_bytes", "max_output_bytes", "max_tool_calls", "pending_timeout_ms", "storage_bytes"];

    /// Sets the limit `name`; its range is checked when the overrides are applied.
    pub fn set(&mut self, name: &str, value: u64) -> Result<(), String> {
        let slot = match name {
            "time_ms" => &mut self.time_ms,
            "memory_bytes" => &mut self.memory_bytes,
            "max_output_bytes" => &mut self.max_output_bytes,
            "max_tool_calls" => &mut self.max_tool_calls,
            "pending_timeout_ms" => &mut self.pending_timeout_ms,
            "storage_bytes" => &mut self.storage_bytes,
            other => return Err(format!("unknown limit {other:?} (known: {})", Self::NAMES.join(", "))),
        };
        *slot = Some(value);
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("limit {name} = {value} is outside the allowed range {min}..={max}")]
pub struct LimitError {
    pub name: &'static str,
    pub value: u64,
    pub min: u64,
    pub max: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_apply_within_maxima_and_refuse_beyond() {
        let maxima = Limits::server_maxima();
        let overrides = LimitOverrides { time_ms: Some(500), ..Default::default() };
        let limits = Limits::default().with_overrides(&overrides, &maxima).unwrap();
        assert_eq!(limits.time_ms, 500);
        assert_eq!(limits.memory_bytes, DEFAULT_MEMORY_BYTES);

        let too_much = LimitOverrides { memory_bytes: Some(MAX_MEMORY_BYTES + 1), ..Default::default() };
        let err = Limits::default().with_overrides(&too_much, &maxima).unwrap_err();
        assert_eq!(err.name, "memory_bytes");
    }

    /// Item 12 of the security review: the maxima were hard-coded; now the operator sets
    /// them (within what the sandbox can do), and defaults follow lowered maxima.
    #[test]
    fn item12_operators_set_the_maxima_and_defaults_stay_within_them() {
        let mut lowered = LimitOverrides::default();
        lowered.set("memory_bytes", 134217728).unwrap();
        lowered.set("time_ms", 10000).unwrap();
        let maxima = Limits::server_maxima().with_overrides(&lowered, &Limits::operator_ceiling()).unwrap();
        let too_much = LimitOverrides { memory_bytes: Some(256 << 20), ..Default::default() };
        assert_eq!(Limits::default().with_overrides(&too_much, &maxima).unwrap_err().name, "memory_bytes");
        let defaults = Limits::default().clamped_to(&maxima);
        assert_eq!((defaults.time_ms, defaults.memory_bytes), (10_000, 128 << 20));
        let beyond = LimitOverrides { memory_bytes: Some(8 << 30), ..Default::default() };
        assert!(Limits::server_maxima().with_overrides(&beyond, &Limits::operator_ceiling()).is_err());
    }

    #[test]
    fn cli_assignments_parse_and_reject_unknown_keys() {
        let mut overrides = LimitOverrides::default();
        overrides.set("max_tool_calls", 7).unwrap();
        assert_eq!(overrides.max_tool_calls, Some(7));
        assert!(overrides.set("cpu", 1).unwrap_err().contains("unknown limit"));
    }
}
