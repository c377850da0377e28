//! The compatibility score: every program of `tests/compat/programs` under CPython and under
//! Sluice, outputs compared; prints a table per area and each program that differs, with its
//! cause from `tests/compat/differences.txt`, and writes them to `docs/compatibility.md`.
//!
//! Run with `cargo bench --bench compat` (needs `python3`).

#[path = "../tests/common/compat.rs"]
mod compat;

use compat::{MIN_IDENTICAL_PERCENT, ProgramResult, Verdict, known_differences, run_corpus, tally};
use sluice::{Sandbox, SandboxConfig};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

#[tokio::main]
async fn main() {
    if !compat::cpython_present() {
        eprintln!("python3 is missing: the corpus is compared with CPython, so nothing was measured");
        std::process::exit(2);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sandbox = Sandbox::new(SandboxConfig::default()).await.expect("a sandbox");
    let results = run_corpus(&sandbox, root).await;
    let report = report(&results, &known_differences(root), &python_version());
    print!("{report}");
    let path = root.join("docs/compatibility.md");
    std::fs::write(&path, report).expect("docs/compatibility.md is writable");
    println!("\nwritten to {}", path.display());
}

fn python_version() -> String {
    let output = std::process::Command::new("python3").arg("--version").output().expect("python3 runs");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn report(results: &[ProgramResult], known: &BTreeMap<String, String>, python: &str) -> String {
    let mut areas: BTreeMap<&str, Vec<&ProgramResult>> = BTreeMap::new();
    for result in results {
        areas.entry(result.name.split('/').next().unwrap_or("")).or_default().push(result);
    }
    let mut out = String::new();
    let _ = writeln!(out, "# Compatibility with CPython\n");
    let _ = writeln!(
        out,
        "Measured by `cargo bench --bench compat`: {} short programs of the kind models write for data work \
         (`tests/compat/programs`), each run under {python} and in a new Sluice container; \
         identical means the same stdout and both ended normally.\n",
        results.len()
    );
    let _ = writeln!(out, "| area | programs | identical | differs | fails | median ms in Sluice |");
    let _ = writeln!(out, "| --- | ---: | ---: | ---: | ---: | ---: |");
    for (area, rows) in &areas {
        let (identical, differs, fails) = tally(rows.iter().copied());
        let mut times: Vec<f64> = rows.iter().map(|r| r.sluice_ms).collect();
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        let _ = writeln!(out, "| {area} | {} | {identical} | {differs} | {fails} | {median:.1} |", rows.len());
    }
    let (identical, differs, fails) = tally(results);
    let share = identical as f64 * 100.0 / results.len().max(1) as f64;
    let _ = writeln!(out, "| **all** | {} | {identical} ({share:.1}%) | {differs} | {fails} | |\n", results.len());
    let _ = writeln!(
        out,
        "Held by the corpus test: at least {MIN_IDENTICAL_PERCENT}% identical, and every other program explained in `tests/compat/differences.txt`.\n"
    );
    let others: Vec<&ProgramResult> = results.iter().filter(|r| r.verdict != Verdict::Identical).collect();
    if !others.is_empty() {
        let _ = writeln!(out, "## The programs that differ, and why\n");
        let _ = writeln!(out, "| program | verdict | cause | first difference |");
        let _ = writeln!(out, "| --- | --- | --- | --- |");
        for r in others {
            let cause = known.get(&r.name).map_or("not yet explained", String::as_str);
            let difference = r.first_difference().replace('|', "\\|");
            let _ = writeln!(out, "| `{}` | {:?} | {cause} | {difference} |", r.name, r.verdict);
        }
    }
    out
}
