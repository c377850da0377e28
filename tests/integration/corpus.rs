//! The compatibility corpus holds its score: the programs print under Sluice what they print
//! under CPython (at least `MIN_IDENTICAL_PERCENT` of them exactly as this machine's 3.11 does,
//! or as a newer CPython does by the differences file), and every one that does not print
//! 3.11's output is explained in `tests/compat/differences.txt` (`cargo bench --bench compat`
//! prints the table).

use crate::common;
use crate::compat::{MIN_IDENTICAL_PERCENT, Verdict, known_differences, programs, run_corpus, tally};
use std::path::Path;

/// Enough programs that one percent is three of them.
const MIN_PROGRAMS: usize = 300;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_corpus_prints_what_cpython_prints() {
    if !common::subject_present("python3 (CPython)", crate::compat::cpython_present()) {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let results = run_corpus(&common::sandbox(), root).await;
    assert!(results.len() >= MIN_PROGRAMS, "the corpus has {} programs, fewer than {MIN_PROGRAMS}", results.len());
    let known = known_differences(root);
    let unexplained: Vec<String> = results
        .iter()
        .filter(|r| r.verdict != Verdict::Identical && !known.contains_key(&r.name))
        .map(|r| format!("{} ({:?}): {}", r.name, r.verdict, r.first_difference()))
        .collect();
    assert!(unexplained.is_empty(), "not in the differences file:\n{}", unexplained.join("\n"));
    let stale: Vec<&String> = known
        .keys()
        .filter(|name| results.iter().all(|r| &r.name != *name || r.verdict == Verdict::Identical))
        .collect();
    assert!(stale.is_empty(), "listed as differing but identical now (or gone): {stale:?}");
    let (identical, _, _) = tally(&results);
    let newer = results
        .iter()
        .filter(|r| {
            r.verdict != Verdict::Identical && known.get(&r.name).is_some_and(|cause| follows_newer_cpython(cause))
        })
        .count();
    assert!(
        (identical + newer) * 100 >= MIN_IDENTICAL_PERCENT * results.len(),
        "{identical} of {} identical and {newer} as a newer CPython prints them, under {MIN_IDENTICAL_PERCENT}%",
        results.len()
    );
}

/// A difference whose cause names the CPython release that prints the same (RustPython follows
/// 3.12 to 3.14 in places) is CPython's output too, only not this machine's 3.11.
fn follows_newer_cpython(cause: &str) -> bool {
    cause.contains("as in CPython 3.1") || cause.contains("as CPython 3.1")
}

#[test]
fn every_program_has_a_name_that_says_what_it_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (name, _) in programs(root) {
        let file = name.rsplit('/').next().unwrap_or_default();
        let (number, slug) = file.split_once('_').unwrap_or_default();
        assert!(number.len() == 3 && number.chars().all(|c| c.is_ascii_digit()), "{name}: NNN_slug.py");
        assert!(slug.len() > 3, "{name}: a slug that says what it does");
    }
}
