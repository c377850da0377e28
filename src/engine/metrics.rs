//! The service's figures at `/metrics`, kept and encoded by `prometheus-client` (OpenMetrics text).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::time::Duration;

/// Upper bounds (seconds) of the execution-time histogram buckets.
const DURATION_BUCKETS: [f64; 10] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0, 120.0];

/// The content type of [`Metrics::render`]'s text.
pub(crate) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct StatusLabel {
    status: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct LimitLabel {
    limit: &'static str,
}

/// Every figure, registered once; label values are closed sets (statuses, limit codes), so
/// no tenant can grow the label space.
#[derive(Debug)]
pub(crate) struct Metrics {
    registry: Registry,
    executions: Family<StatusLabel, Counter>,
    tool_calls: Family<StatusLabel, Counter>,
    limit_hits: Family<LimitLabel, Counter>,
    containers_created: Counter,
    containers_expired: Counter,
    containers_evicted: Counter,
    containers_restored: Counter,
    containers: Gauge,
    executions_waiting: Gauge,
    execution_seconds: Histogram,
}

/// Figures read at scrape time rather than counted.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Gauges {
    pub(crate) containers: u64,
    pub(crate) executions_waiting: u64,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let executions = Family::<StatusLabel, Counter>::default();
        let tool_calls = Family::<StatusLabel, Counter>::default();
        let limit_hits = Family::<LimitLabel, Counter>::default();
        let (containers_created, containers_expired) = (Counter::default(), Counter::default());
        let (containers_evicted, containers_restored) = (Counter::default(), Counter::default());
        let (containers, executions_waiting) = (Gauge::default(), Gauge::default());
        let execution_seconds = Histogram::new(DURATION_BUCKETS);
        // Counters get their `_total` suffix from the encoder.
        registry.register("sluice_executions", "Executions by status reached", executions.clone());
        registry.register("sluice_tool_calls", "Tool calls from code by outcome", tool_calls.clone());
        registry.register("sluice_limit_hits", "Executions stopped by a limit", limit_hits.clone());
        registry.register("sluice_containers_created", "Containers created", containers_created.clone());
        registry.register(
            "sluice_containers_expired",
            "Containers removed after their idle time or maximum age",
            containers_expired.clone(),
        );
        registry.register(
            "sluice_containers_evicted",
            "Containers saved and unloaded to make room",
            containers_evicted.clone(),
        );
        registry.register(
            "sluice_containers_restored",
            "Containers brought back from the store",
            containers_restored.clone(),
        );
        registry.register("sluice_containers", "Containers alive in memory", containers.clone());
        registry.register(
            "sluice_executions_waiting",
            "Executions waiting for client tool results",
            executions_waiting.clone(),
        );
        registry.register(
            "sluice_execution_seconds",
            "Script run time per finished execution",
            execution_seconds.clone(),
        );
        Self {
            registry,
            executions,
            tool_calls,
            limit_hits,
            containers_created,
            containers_expired,
            containers_evicted,
            containers_restored,
            containers,
            executions_waiting,
            execution_seconds,
        }
    }
}

impl Metrics {
    /// An execution reached `status` (completed, failed, requires_action).
    pub(crate) fn execution(&self, status: &'static str) {
        self.executions.get_or_create(&StatusLabel { status }).inc();
    }

    pub(crate) fn execution_time(&self, run_time: Duration) {
        self.execution_seconds.observe(run_time.as_secs_f64());
    }

    pub(crate) fn tool_call(&self, status: &'static str) {
        self.tool_calls.get_or_create(&StatusLabel { status }).inc();
    }

    pub(crate) fn limit_hit(&self, limit: &'static str) {
        self.limit_hits.get_or_create(&LimitLabel { limit }).inc();
    }

    pub(crate) fn container_created(&self) {
        self.containers_created.inc();
    }

    pub(crate) fn container_expired(&self) {
        self.containers_expired.inc();
    }

    pub(crate) fn container_evicted(&self) {
        self.containers_evicted.inc();
    }

    pub(crate) fn container_restored(&self) {
        self.containers_restored.inc();
    }

    /// The OpenMetrics text of every figure, with the gauges set to `gauges`.
    pub(crate) fn render(&self, gauges: Gauges) -> String {
        self.containers.set(i64::try_from(gauges.containers).unwrap_or(i64::MAX));
        self.executions_waiting.set(i64::try_from(gauges.executions_waiting).unwrap_or(i64::MAX));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry).expect("writing to a String cannot fail");
        text
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
        assert!(text.contains("sluice_executions_waiting 1"));
        assert!(text.contains("sluice_execution_seconds_bucket{le=\"0.001\"} 0"));
        assert!(text.contains("sluice_execution_seconds_bucket{le=\"0.005\"} 1"));
        assert!(text.contains("sluice_execution_seconds_count 1"));
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
