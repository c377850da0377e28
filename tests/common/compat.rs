//! The compatibility corpus (`tests/compat/programs`): each program run under CPython and under
//! Sluice, and their outputs compared. Shared by the integration test, which holds the score,
//! and `cargo bench --bench compat`, which prints it.

#![allow(dead_code)]

use sluice::{Answers, LimitOverrides, Limits, Sandbox, Toolset};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the programs live, one directory per area.
pub const PROGRAMS_DIR: &str = "tests/compat/programs";
/// Programs known not to print what CPython prints, each with its cause.
pub const DIFFERENCES_FILE: &str = "tests/compat/differences.txt";
/// The least share of programs that must print exactly what CPython 3.11 prints. The guest is
/// RustPython's Python 3.14: the programs that differ do so as CPython 3.12 to 3.14 would
/// (each is listed with its cause), which holds the share at 97.8% (318 of 325) against 3.11.
pub const MIN_IDENTICAL_PERCENT: usize = 97;
/// The most time one program may take under Sluice.
const PROGRAM_TIME_MS: u64 = 20_000;
/// Programs run this many at a time.
const PARALLEL_PROGRAMS: usize = 2;

/// How a program's run under Sluice compares with CPython's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// The same output, and both ended normally.
    Identical,
    /// Both ended normally, with different output.
    Differs,
    /// Sluice's run ended with an error where CPython's did not.
    Fails,
}

/// One program's runs.
#[derive(Debug, Clone)]
pub struct ProgramResult {
    /// `area/file.py`.
    pub name: String,
    pub verdict: Verdict,
    pub cpython: String,
    pub sluice: String,
    /// The last line of Sluice's stderr when it failed (the exception).
    pub error: String,
    pub sluice_ms: f64,
}

impl ProgramResult {
    /// The first line where the two outputs part, for a report.
    pub fn first_difference(&self) -> String {
        if self.verdict == Verdict::Fails {
            return self.error.clone();
        }
        let (mut ours, mut theirs) = (self.sluice.lines(), self.cpython.lines());
        loop {
            match (ours.next(), theirs.next()) {
                (Some(a), Some(b)) if a == b => continue,
                (a, b) => return format!("Sluice {:?}, CPython {:?}", a.unwrap_or("<end>"), b.unwrap_or("<end>")),
            }
        }
    }
}

/// Every program of the corpus, by name, in order.
pub fn programs(root: &Path) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    let dir = root.join(PROGRAMS_DIR);
    let mut areas: Vec<PathBuf> =
        std::fs::read_dir(&dir).expect("the corpus").map(|e| e.expect("entry").path()).collect();
    areas.sort();
    for area in areas.iter().filter(|p| p.is_dir()) {
        let mut files: Vec<PathBuf> =
            std::fs::read_dir(area).expect("an area").map(|e| e.expect("entry").path()).collect();
        files.sort();
        for file in files.into_iter().filter(|p| p.extension().is_some_and(|e| e == "py")) {
            let name = file.strip_prefix(&dir).expect("inside the corpus").to_string_lossy().into_owned();
            found.push((name, file));
        }
    }
    found
}

/// `name: cause` lines of the differences file (`#` starts a comment).
pub fn known_differences(root: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root.join(DIFFERENCES_FILE)).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (name, cause) =
                line.split_once(": ").unwrap_or_else(|| panic!("{DIFFERENCES_FILE}: no cause in {line:?}"));
            (name.trim().to_owned(), cause.trim().to_owned())
        })
        .collect()
}

/// Whether `python3` runs here.
pub fn cpython_present() -> bool {
    std::process::Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// CPython's stdout for `path`, and whether it ended normally.
fn run_cpython(path: &Path) -> (String, bool) {
    let output = std::process::Command::new("python3")
        .arg(path)
        .env("PYTHONHASHSEED", "0")
        .env("PYTHONIOENCODING", "utf-8")
        .output()
        .expect("python3 runs");
    (String::from_utf8_lossy(&output.stdout).into_owned(), output.status.success())
}

/// Sluice's stdout for `source` in a new container, whether it ended normally, and stderr.
async fn run_sluice(sandbox: &Sandbox, source: &str) -> (String, bool, String, f64) {
    let mut container = sandbox.create_container().await.expect("a container");
    let overrides = LimitOverrides { time_ms: Some(PROGRAM_TIME_MS), ..Default::default() };
    let limits = Limits::default().with_overrides(&overrides, &Limits::server_maxima()).expect("limits");
    let started = std::time::Instant::now();
    let run = sluice::run_script(&mut container, source, Toolset::default(), limits, &Answers::default()).await;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    match run {
        Ok(run) => {
            let outcome = run.outcome;
            let ok = outcome.return_code == 0 && outcome.stop.is_none();
            (outcome.stdout, ok, outcome.stderr, ms)
        }
        Err(e) => (String::new(), false, e.to_string(), ms),
    }
}

/// Runs every program under both and compares.
pub async fn run_corpus(sandbox: &Sandbox, root: &Path) -> Vec<ProgramResult> {
    let gate = Arc::new(tokio::sync::Semaphore::new(PARALLEL_PROGRAMS));
    let mut tasks = Vec::new();
    for (name, path) in programs(root) {
        let (sandbox, gate) = (sandbox.clone(), gate.clone());
        tasks.push(tokio::spawn(async move {
            let _slot = gate.acquire().await.expect("open");
            let source = std::fs::read_to_string(&path).expect("a program");
            let cpython_path = path.clone();
            let (cpython, cpython_ok) =
                tokio::task::spawn_blocking(move || run_cpython(&cpython_path)).await.expect("joined");
            assert!(cpython_ok, "{name} fails under CPython: the corpus holds only programs CPython runs");
            let (sluice, ok, stderr, sluice_ms) = run_sluice(&sandbox, &source).await;
            let verdict = match (ok, sluice == cpython) {
                (false, _) => Verdict::Fails,
                (true, true) => Verdict::Identical,
                (true, false) => Verdict::Differs,
            };
            let error = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").to_owned();
            ProgramResult { name, verdict, cpython, sluice, error, sluice_ms }
        }));
    }
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.expect("a program's task"));
    }
    results
}

/// Counts per verdict: (identical, differs, fails).
pub fn tally<'a>(results: impl IntoIterator<Item = &'a ProgramResult>) -> (usize, usize, usize) {
    let mut counts = (0, 0, 0);
    for result in results {
        match result.verdict {
            Verdict::Identical => counts.0 += 1,
            Verdict::Differs => counts.1 += 1,
            Verdict::Fails => counts.2 += 1,
        }
    }
    counts
}
