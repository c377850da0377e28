//! Shared by the benchmarks: the process's own memory figures, and the median of samples.

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

/// The median of `samples` (the mean of the middle two when their number is even); NaN for
/// none.
pub fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}
