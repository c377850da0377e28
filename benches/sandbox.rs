//! The sandbox core's figures, printed as a table (medians of many runs, one process).
//!
//! Run with `cargo bench --bench sandbox`. Figures are wall-clock medians on this machine;
//! the targets are those of the sandbox-core issue.

mod common;
use common::{median, status_bytes};
use sluice::{CallResult, GuestTool};
use sluice::{Container, ExecuteRequest, Limits, Sandbox, SandboxConfig, Step};
use std::time::{Duration, Instant};

const COLD_RUNS: usize = 200;
const IDLE_COLD_RUNS: usize = 41;
const IDLE_GAP: Duration = Duration::from_millis(25);
const WARM_RUNS: usize = 2_000;
const REPL_RUNS: usize = 200;
const GATHER_RUNS: usize = 21;
const GATHER_CALLS: usize = 1_000;
const IDLE_CONTAINERS: usize = 100;
const SNAPSHOT_RUNS: usize = 51;
const LAZY_RUNS: usize = 41;
const FIRST_SQLITE: &str = "import sqlite3\ndb = sqlite3.connect(':memory:')\ndb.execute('select 1').fetchone()";
const FIRST_ZONEINFO: &str = "import datetime, zoneinfo\n\
    datetime.datetime(2025, 3, 9, 12, tzinfo=datetime.timezone.utc).astimezone(zoneinfo.ZoneInfo('America/New_York'))";

const REPL_CELLS: [&str; 10] = [
    "a = 1",
    "b = a + 1",
    "c = [a, b]",
    "def f(x):\n    return x * 2",
    "d = f(c[1])",
    "e = {'d': d}",
    "import json",
    "s = json.dumps(e)",
    "t = len(s)",
    "t",
];

struct Figure {
    name: &'static str,
    unit: &'static str,
    samples: Vec<f64>,
    target: Option<f64>,
}

impl Figure {
    fn stats(&self) -> (f64, f64, f64) {
        let min = self.samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self.samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (median(&self.samples), min, max)
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

async fn exec(container: &mut Container, code: &str, tools: &[GuestTool]) -> Step {
    let request = ExecuteRequest { code, tools, files: &[], limits: Limits::default(), now_ns: None };
    container.execute(request).await.expect("execute")
}

fn finished(step: Step) {
    match step {
        Step::Finished(outcome) => assert_eq!(outcome.return_code, 0, "{}", outcome.stderr),
        Step::Pending(_) => panic!("unexpected pause"),
    }
}

/// Cold starts of sessions that arrive apart, with and without the ready pool, interleaved:
/// after an idle pause the pool has containers waiting, prefaulted.
async fn cold_start_after_idle(pooled: &Sandbox) -> (Figure, Figure) {
    let config = SandboxConfig { ready_containers: 0, max_containers: 4, ..SandboxConfig::default() };
    let unpooled = Sandbox::new(config).await.expect("a sandbox without a ready pool");
    let (mut with_pool, mut without) = (Vec::new(), Vec::new());
    for _ in 0..IDLE_COLD_RUNS {
        for (sandbox, samples) in [(pooled, &mut with_pool), (&unpooled, &mut without)] {
            tokio::time::sleep(IDLE_GAP).await;
            let started = Instant::now();
            let mut container = sandbox.create_container().await.expect("container");
            finished(exec(&mut container, "x = 1 + 1", &[]).await);
            samples.push(ms(started.elapsed()));
        }
    }
    (
        Figure {
            name: "  same, 25 ms after the last one (ready pool)",
            unit: "ms",
            samples: with_pool,
            target: Some(2.0),
        },
        Figure { name: "  same, 25 ms after the last one, no ready pool", unit: "ms", samples: without, target: None },
    )
}

async fn cold_start(sandbox: &Sandbox) -> Figure {
    let mut samples = Vec::with_capacity(COLD_RUNS);
    for _ in 0..COLD_RUNS {
        let started = Instant::now();
        let mut container = sandbox.create_container().await.expect("container");
        finished(exec(&mut container, "x = 1 + 1", &[]).await);
        samples.push(ms(started.elapsed()));
    }
    Figure { name: "new container + first `x = 1 + 1`", unit: "ms", samples, target: Some(2.0) }
}

/// A new container's first use of a lazily loaded module: what a script that uses it pays.
/// `None` (saying so) when this guest lacks the module.
async fn first_use(sandbox: &Sandbox, name: &'static str, code: &str) -> Option<Figure> {
    let mut probe = sandbox.create_container().await.expect("container");
    if let Step::Finished(outcome) = exec(&mut probe, code, &[]).await
        && outcome.return_code != 0
    {
        eprintln!("skipped {name}: this guest cannot run it: {}", outcome.stderr.lines().last().unwrap_or(""));
        return None;
    }
    let mut samples = Vec::with_capacity(LAZY_RUNS);
    for _ in 0..LAZY_RUNS {
        let started = Instant::now();
        let mut container = sandbox.create_container().await.expect("container");
        finished(exec(&mut container, code, &[]).await);
        samples.push(ms(started.elapsed()));
    }
    Some(Figure { name, unit: "ms", samples, target: None })
}

async fn warm_exec(sandbox: &Sandbox) -> Figure {
    let mut container = sandbox.create_container().await.expect("container");
    finished(exec(&mut container, "x = 0", &[]).await);
    let mut samples = Vec::with_capacity(WARM_RUNS);
    for _ in 0..WARM_RUNS {
        let started = Instant::now();
        finished(exec(&mut container, "x = 1 + 1", &[]).await);
        samples.push(ms(started.elapsed()));
    }
    Figure { name: "`x = 1 + 1` on a warm container", unit: "ms", samples, target: Some(0.1) }
}

async fn repl_session(sandbox: &Sandbox) -> Figure {
    let mut samples = Vec::with_capacity(REPL_RUNS);
    for _ in 0..REPL_RUNS {
        let mut container = sandbox.create_container().await.expect("container");
        let started = Instant::now();
        for cell in REPL_CELLS {
            finished(exec(&mut container, cell, &[]).await);
        }
        samples.push(ms(started.elapsed()));
    }
    Figure { name: "ten dependent REPL executions, one container", unit: "ms", samples, target: Some(2.0) }
}

/// Time per call of a gather of N calls that the host answers at once, in microseconds.
async fn gather_per_call(sandbox: &Sandbox, calls: usize) -> Vec<f64> {
    let tools = [GuestTool { name: "echo".into(), params: vec![], description: None, answered_in_place: false }];
    let code = format!("import asyncio\nr = await asyncio.gather(*(echo({{'i': i}}) for i in range({calls})))\nlen(r)");
    let mut container = sandbox.create_container().await.expect("container");
    let mut samples = Vec::with_capacity(GATHER_RUNS);
    for _ in 0..GATHER_RUNS {
        let started = Instant::now();
        let mut step = exec(&mut container, &code, &tools).await;
        while let Step::Pending(pending) = step {
            let results: Vec<CallResult> = pending.calls.iter().map(|c| CallResult::ok(c.seq, "ok")).collect();
            step = container.resume(&results, &[], None).await.expect("resume");
        }
        finished(step);
        samples.push(ms(started.elapsed()) * 1e3 / calls.max(1) as f64);
    }
    samples
}

/// Private memory (anonymous pages: what the containers wrote) and all resident pages (which
/// also counts each container's mapping of the shared image pages it read) per container.
/// Snapshot of a container after a small execution: (bytes, save ms, restore ms) samples.
async fn snapshots(sandbox: &Sandbox) -> (Figure, Figure, usize) {
    let mut container = sandbox.create_container().await.expect("container");
    finished(
        exec(
            &mut container,
            "import json\nrows = [{'id': i, 'v': i * 1.5} for i in range(200)]\ntotal = sum(r['v'] for r in rows)",
            &[],
        )
        .await,
    );
    let (mut save, mut restore) = (Vec::new(), Vec::new());
    let mut size = 0;
    for _ in 0..SNAPSHOT_RUNS {
        let started = Instant::now();
        let bytes = container.snapshot(serde_json::Value::Null).await.expect("snapshot");
        save.push(ms(started.elapsed()));
        size = bytes.len();
        let started = Instant::now();
        let restored = sandbox.restore_container(uuid::Uuid::new_v4(), container.id(), &bytes).await.expect("restore");
        restore.push(ms(started.elapsed()));
        drop(restored);
    }
    (
        Figure { name: "snapshot save, after a small execution", unit: "ms", samples: save, target: Some(5.0) },
        Figure { name: "snapshot restore into a new container", unit: "ms", samples: restore, target: Some(5.0) },
        size,
    )
}

async fn idle_memory(sandbox: &Sandbox) -> (Figure, Figure, usize) {
    let mut containers = Vec::with_capacity(IDLE_CONTAINERS);
    let (anon_before, rss_before) = (status_bytes("RssAnon"), status_bytes("VmRSS"));
    for i in 0..IDLE_CONTAINERS {
        let mut container = sandbox.create_container().await.expect("container");
        finished(
            exec(&mut container, &format!("rows = [{{'i': j}} for j in range({i} + 100)]\ntotal = len(rows)"), &[])
                .await,
        );
        containers.push(container);
    }
    let per_container =
        |after: u64, before: u64| after.saturating_sub(before) as f64 / IDLE_CONTAINERS as f64 / (1 << 20) as f64;
    let private = per_container(status_bytes("RssAnon"), anon_before);
    let resident = per_container(status_bytes("VmRSS"), rss_before);
    let linear = containers[0].memory_bytes();
    let private = Figure {
        name: "private memory added per idle container",
        unit: "MiB",
        samples: vec![private],
        target: Some(2.0),
    };
    let resident = Figure {
        name: "  resident incl. shared image pages mapped",
        unit: "MiB",
        samples: vec![resident],
        target: None,
    };
    (private, resident, linear)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let started = Instant::now();
        let sandbox = Sandbox::new(SandboxConfig::default()).await.expect("sandbox");
        eprintln!("sandbox ready in {:.1} ms (image {})", ms(started.elapsed()), &sandbox.image_hash()[..12]);
        // Warm-up: page in the image and the allocator's arenas.
        for _ in 0..20 {
            let mut c = sandbox.create_container().await.expect("container");
            finished(exec(&mut c, "x = 1 + 1", &[]).await);
        }
        let (after_idle, after_idle_unpooled) = cold_start_after_idle(&sandbox).await;
        let mut figures = vec![
            cold_start(&sandbox).await,
            after_idle,
            after_idle_unpooled,
            warm_exec(&sandbox).await,
            repl_session(&sandbox).await,
        ];
        let with_calls = gather_per_call(&sandbox, GATHER_CALLS).await;
        let empty: Vec<f64> = gather_per_call(&sandbox, 0).await;
        let baseline_us = Figure { name: "", unit: "", samples: empty, target: None }.stats().0;
        let marginal: Vec<f64> =
            with_calls.iter().map(|per_call| per_call - baseline_us / GATHER_CALLS as f64).collect();
        figures.push(Figure {
            name: "per call, gather of 1,000 answered at once",
            unit: "us",
            samples: with_calls,
            target: Some(20.0),
        });
        figures.push(Figure {
            name: "  same, minus an empty gather's time",
            unit: "us",
            samples: marginal,
            target: Some(20.0),
        });
        let (save, restore, snapshot_bytes) = snapshots(&sandbox).await;
        figures.push(save);
        figures.push(restore);
        figures.push(Figure {
            name: "snapshot size, after a small execution",
            unit: "KiB",
            samples: vec![snapshot_bytes as f64 / 1024.0],
            target: Some(1024.0),
        });
        let (private, resident, linear) = idle_memory(&sandbox).await;
        figures.push(private);
        figures.push(resident);
        // After the idle-memory figure: containers that loaded SQLite leave slots behind them.
        figures.extend(first_use(&sandbox, "new container + first `import sqlite3` and a query", FIRST_SQLITE).await);
        figures.extend(first_use(&sandbox, "new container + first `zoneinfo` conversion", FIRST_ZONEINFO).await);

        println!("| figure | median | min | max | target | |");
        println!("| --- | ---: | ---: | ---: | ---: | --- |");
        for figure in &figures {
            let (median, min, max) = figure.stats();
            let (target, verdict) = match figure.target {
                Some(t) => (format!("<= {t} {}", figure.unit), if median <= t { "ok" } else { "MISSED" }),
                None => (String::new(), ""),
            };
            let u = figure.unit;
            println!("| {} | {median:.3} {u} | {min:.3} {u} | {max:.3} {u} | {target} | {verdict} |", figure.name);
        }
        println!(
            "\n{} samples per latency figure; idle-memory figure from {IDLE_CONTAINERS} containers (linear memory each: {:.1} MiB, shared copy-on-write with the image).",
            COLD_RUNS,
            linear as f64 / (1 << 20) as f64
        );
    });
}
