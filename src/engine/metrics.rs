//! Counters the service exports at `/metrics`, in Prometheus' text format.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds (seconds) of the execution-time histogram buckets.
const DURATION_BUCKETS: [f64; 10] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0, 120.0];

#[derive(Debug, Default)]
pub(crate) struct Metrics {
    executions: Mutex<BTreeMap<&'static str, u64>>,
    tool_calls: Mutex<BTreeMap<String, u64>>,
    limit_hits: Mutex<BTreeMap<&'static str, u64>>,
    containers_created: AtomicU64,
    containers_expired: AtomicU64,
    containers_evicted: AtomicU64,
    containers_restored: AtomicU64,
    duration_buckets: [AtomicU64; DURATION_BUCKETS.len()],
    duration_count: AtomicU64,
    duration_sum_micros: AtomicU64,
}

/// Figures read at scrape time rather than counted.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Gauges {
    pub containers: u64,
    pub executions_waiting: u64,
}

fn bump<K: Ord>(map: &Mutex<BTreeMap<K, u64>>, key: K) {
    *map.lock().unwrap_or_else(|p| p.into_inner()).entry(key).or_default() += 1;
}

impl Metrics {
    /// An execution reached `status` (completed, failed, requires_action).
    pub(crate) fn execution(&self, status: &'static str) {
        bump(&self.executions, status);
    }

    pub(crate) fn execution_time(&self, run_time: Duration) {
        let seconds = run_time.as_secs_f64();
        for (bucket, bound) in self.duration_buckets.iter().zip(DURATION_BUCKETS) {
            if seconds <= bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.duration_count.fetch_add(1, Ordering::Relaxed);
        self.duration_sum_micros.fetch_add(run_time.as_micros() as u64, Ordering::Relaxed);
    }

    pub(crate) fn tool_call(&self, status: &str) {
        bump(&self.tool_calls, status.to_owned());
    }

    pub(crate) fn limit_hit(&self, code: &'static str) {
        bump(&self.limit_hits, code);
    }

    pub(crate) fn container_created(&self) {
        self.containers_created.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn container_expired(&self) {
        self.containers_expired.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn container_evicted(&self) {
        self.containers_evicted.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn container_restored(&self) {
        self.containers_restored.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn render(&self, gauges: Gauges) -> String {
        let mut out = String::new();
        let counter = |out: &mut String, name: &str, help: &str, label: &str, values: Vec<(String, u64)>| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            for (value, count) in values {
                let _ = writeln!(out, "{name}{{{label}=\"{value}\"}} {count}");
            }
        };
        let read = |map: &Mutex<BTreeMap<&'static str, u64>>| {
            map.lock().unwrap_or_else(|p| p.into_inner()).iter().map(|(k, v)| (k.to_string(), *v)).collect()
        };
        counter(&mut out, "sluice_executions_total", "Executions by status reached.", "status", read(&self.executions));
        let calls =
            self.tool_calls.lock().unwrap_or_else(|p| p.into_inner()).iter().map(|(k, v)| (k.clone(), *v)).collect();
        counter(&mut out, "sluice_tool_calls_total", "Tool calls from code by outcome.", "status", calls);
        counter(&mut out, "sluice_limit_hits_total", "Executions stopped by a limit.", "limit", read(&self.limit_hits));
        let _ = writeln!(
            out,
            "# HELP sluice_containers_created_total Containers created.\n# TYPE sluice_containers_created_total counter\nsluice_containers_created_total {}",
            self.containers_created.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP sluice_containers_expired_total Containers removed after their idle time or maximum age.\n# TYPE sluice_containers_expired_total counter\nsluice_containers_expired_total {}",
            self.containers_expired.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP sluice_containers_evicted_total Containers saved and unloaded to make room.\n# TYPE sluice_containers_evicted_total counter\nsluice_containers_evicted_total {}",
            self.containers_evicted.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP sluice_containers_restored_total Containers brought back from the store.\n# TYPE sluice_containers_restored_total counter\nsluice_containers_restored_total {}",
            self.containers_restored.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP sluice_containers Containers alive in memory.\n# TYPE sluice_containers gauge\nsluice_containers {}",
            gauges.containers
        );
        let _ = writeln!(
            out,
            "# HELP sluice_executions_waiting Executions waiting for client tool results.\n# TYPE sluice_executions_waiting gauge\nsluice_executions_waiting {}",
            gauges.executions_waiting
        );
        let name = "sluice_execution_seconds";
        let _ = writeln!(out, "# HELP {name} Script run time per finished execution.\n# TYPE {name} histogram");
        for (bucket, bound) in self.duration_buckets.iter().zip(DURATION_BUCKETS) {
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {}", bucket.load(Ordering::Relaxed));
        }
        let count = self.duration_count.load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "{name}_sum {}", self.duration_sum_micros.load(Ordering::Relaxed) as f64 / 1e6);
        let _ = writeln!(out, "{name}_count {count}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_gauges_and_histogram() {
        let metrics = Metrics::default();
        metrics.execution("completed");
        metrics.execution("completed");
        metrics.tool_call("succeeded");
        metrics.limit_hit("execution_time_exceeded");
        metrics.execution_time(Duration::from_millis(3));
        let text = metrics.render(Gauges { containers: 4, executions_waiting: 1 });
        assert!(text.contains("sluice_executions_total{status=\"completed\"} 2"), "{text}");
        assert!(text.contains("sluice_tool_calls_total{status=\"succeeded\"} 1"));
        assert!(text.contains("sluice_limit_hits_total{limit=\"execution_time_exceeded\"} 1"));
        assert!(text.contains("sluice_containers 4"));
        assert!(text.contains("sluice_execution_seconds_bucket{le=\"0.001\"} 0"));
        assert!(text.contains("sluice_execution_seconds_bucket{le=\"0.005\"} 1"));
        assert!(text.contains("sluice_execution_seconds_count 1"));
    }
}
