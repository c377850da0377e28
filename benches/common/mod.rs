//! Shared by the benchmarks: the process's own memory figures.

/// A `/proc/self/status` figure in bytes (`VmRSS`: all resident pages, `RssAnon`: private
/// ones, ...); 0 where the file cannot be read.
pub fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field).and_then(|rest| rest.strip_prefix(':')))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}
