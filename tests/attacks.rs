//! The attacker suite: each hole the security review of 1ad40ef found, tried again against a
//! live `sluice serve` on loopback, and reported as held or not, with the host CPU and memory
//! the server spent on it. Runs under `cargo test` (a plain binary: it prints its own table);
//! `cargo test --test attacks -- item07` runs the items whose name contains `item07`.

#[path = "common/server.rs"]
mod server;

use serde_json::{Value, json};
use server::Server;
use std::future::Future;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A check that failed: what was expected.
type Outcome = Result<String, String>;
type Attack = fn() -> Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// Fails the item with a message unless `condition` holds.
macro_rules! ensure {
    ($condition:expr, $($message:tt)+) => {
        match $condition {
            true => {}
            false => return Err(format!($($message)+)),
        }
    };
}

// -- measuring the server ---------------------------------------------------------------

/// CPU time a process has used, and its resident memory now and at its peak.
#[derive(Debug, Clone, Copy, Default)]
struct Usage {
    cpu: Duration,
    rss_mb: f64,
    peak_mb: f64,
}

fn usage(pid: u32) -> Usage {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the file, 12 and 13 after the name.
    let ticks: u64 = [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<u64>().ok()).sum();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb = |name: &str| {
        status.lines().find_map(|l| l.strip_prefix(name)?.split_whitespace().next()?.parse::<f64>().ok()).unwrap_or(0.0)
    };
    Usage {
        cpu: Duration::from_millis(ticks * 1000 / clock_ticks()),
        rss_mb: kb("VmRSS:") / 1024.0,
        peak_mb: kb("VmHWM:") / 1024.0,
    }
}

fn clock_ticks() -> u64 {
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        let out = Command::new("getconf").arg("CLK_TCK").output().ok();
        out.and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok()).unwrap_or(100)
    })
}

/// The server of an item and what it used during the attack.
struct Measured {
    pid: u32,
    before: Usage,
}

impl Measured {
    fn start(server: &Server) -> Self {
        let pid = server.child.id();
        Self { pid, before: usage(pid) }
    }

    fn report(&self, note: &str) -> String {
        let now = usage(self.pid);
        format!(
            "{note} | cpu {:.2} s, rss {:.0} MB (peak {:.0} MB)",
            (now.cpu.saturating_sub(self.before.cpu)).as_secs_f64(),
            now.rss_mb,
            now.peak_mb
        )
    }
}

// -- servers and requests -------------------------------------------------------------------

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("attacks-{name}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn serve(data_dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
    let mut all = vec!["--data-dir", data_dir.to_str().unwrap()];
    all.extend_from_slice(args);
    server::start(&all, env)
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(120)).build().unwrap()
}

/// A request's status and JSON body (or the body as a string).
async fn call(method: &str, url: &str, key: Option<&str>, body: Option<Value>) -> (u16, Value) {
    let client = client();
    let mut request = client.request(method.parse().unwrap(), url);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_string());
    }
    let response = request.send().await.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

async fn execute(base: &str, key: Option<&str>, body: Value) -> (u16, Value) {
    call("POST", &format!("{base}/v1/executions"), key, Some(body)).await
}

async fn answer(base: &str, key: Option<&str>, execution: &Value, content: &str) -> (u16, Value) {
    let id = execution["id"].as_str().unwrap();
    let results: Vec<Value> = execution["tool_uses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| json!({"type": "tool_result", "tool_use_id": u["id"], "content": content}))
        .collect();
    call("POST", &format!("{base}/v1/executions/{id}/tool_results"), key, Some(json!({"tool_results": results}))).await
}

fn client_tool(name: &str) -> Value {
    json!({"name": name, "allowed_callers": ["code_execution_20260120"]})
}

fn sluice_command(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sluice")).args(args).output().unwrap()
}

/// Stops a server gracefully (SIGTERM) and waits for it.
fn terminate(mut server: Server) -> (Option<i32>, Duration) {
    let started = Instant::now();
    let _ = Command::new("kill").args(["-TERM", &server.child.id().to_string()]).status();
    let status = server.child.wait().unwrap();
    (status.code(), started.elapsed())
}

/// Serves `routes` on loopback in this process; returns the base URL.
async fn tool_server(routes: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, routes).await });
    format!("http://{address}")
}

async fn sqlite(data_dir: &Path) -> sqlx::SqlitePool {
    let url = format!("sqlite://{}", data_dir.join("sluice.db").display());
    sqlx::SqlitePool::connect(&url).await.unwrap()
}

// -- the items ------------------------------------------------------------------------------

/// Item 1: tools belong to the key that registered them, capped per key.
async fn item01_tools_belong_to_their_key() -> Outcome {
    let dir = scratch("item01");
    let server = serve(&dir, &["--api-key", "alpha", "--api-key", "beta", "--quota", "tools=3"], &[]);
    let (base, measured) = (server.base.clone(), Measured::start(&server));
    let tools = format!("{base}/v1/tools");
    let mut alpha_tool = client_tool("lookup");
    alpha_tool["description"] = json!("alpha's");
    let (status, _) = call("POST", &tools, Some("alpha"), Some(alpha_tool)).await;
    ensure!(status == 201, "alpha registers lookup: {status}");
    let (_, listed) = call("GET", &tools, Some("beta"), None).await;
    ensure!(listed["data"] == json!([]), "beta sees alpha's tools: {listed}");
    let (get, _) = call("GET", &format!("{tools}/lookup"), Some("beta"), None).await;
    let (delete, _) = call("DELETE", &format!("{tools}/lookup"), Some("beta"), None).await;
    ensure!(get == 404 && delete == 404, "beta reads or deletes alpha's tool: {get} {delete}");
    let mut hijack = client_tool("lookup");
    hijack["description"] = json!("beta's");
    let (status, _) = call("POST", &tools, Some("beta"), Some(hijack)).await;
    ensure!(status == 201, "beta may use the same name for its own tool: {status}");
    let (_, kept) = call("GET", &format!("{tools}/lookup"), Some("alpha"), None).await;
    ensure!(kept["description"] == "alpha's", "alpha's tool was replaced: {kept}");
    for name in ["two", "three"] {
        call("POST", &tools, Some("alpha"), Some(client_tool(name))).await;
    }
    let (capped, body) = call("POST", &tools, Some("alpha"), Some(client_tool("four"))).await;
    ensure!(capped == 429 && body["error"]["type"] == "rate_limit_error", "no cap on tools: {capped} {body}");
    Ok(measured.report("other keys' tools invisible and untouchable; 4th tool refused (429)"))
}

/// Item 2: `http` tools reach only operator-allowed prefixes; no private address, no redirect.
async fn item02_http_tools_cannot_reach_private_addresses() -> Outcome {
    let secret_hits = Arc::new(AtomicUsize::new(0));
    let hits = secret_hits.clone();
    let secret = tool_server(axum::Router::new().fallback(move || {
        hits.fetch_add(1, Ordering::SeqCst);
        async { "SECRET" }
    }))
    .await;
    let in_flight = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (now, peak) = (in_flight.clone(), most.clone());
    let secret_for_redirect = secret.clone();
    let tools = tool_server(
        axum::Router::new()
            .route(
                "/slow",
                axum::routing::post(move || {
                    let (now, peak) = (now.clone(), peak.clone());
                    async move {
                        let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(n, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        now.fetch_sub(1, Ordering::SeqCst);
                        "ok"
                    }
                }),
            )
            .route(
                "/redirect",
                axum::routing::post(move || {
                    let to = secret_for_redirect.clone();
                    async move { axum::response::Redirect::temporary(&to) }
                }),
            )
            .route("/huge", axum::routing::post(|| async { vec![b'x'; 100 << 20] })),
    )
    .await;
    let dir = scratch("item02");
    let allow = format!("{tools}/");
    let server = serve(&dir, &["--http-tool-allow", &allow], &[]);
    let (base, measured) = (server.base.clone(), Measured::start(&server));
    let secret_port = secret.rsplit(':').next().unwrap();
    let http_tool = |name: &str, url: &str| {
        json!({"name": name, "allowed_callers": ["code_execution_20260120"], "side_effects": "read_only",
               "executor": {"type": "http", "url": url}})
    };
    for url in [
        format!("{secret}/"),
        format!("http://localhost:{secret_port}/"),
        format!("http://[::1]:{secret_port}/"),
        format!("http://2130706433:{secret_port}/"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        format!("{tools}@127.0.0.1:{secret_port}/"),
    ] {
        let (registered, body) = call("POST", &format!("{base}/v1/tools"), None, Some(http_tool("t", &url))).await;
        ensure!(registered == 400 && body["error"]["type"] == "invalid_request_error", "{url} registered: {body}");
        let inline = json!({"code": "print(await t({}))", "tools": [http_tool("t", &url)]});
        let (status, body) = execute(&base, None, inline).await;
        ensure!(status == 400, "{url} accepted inline: {status} {body}");
    }
    let code = "import asyncio, sluice\nr = []\ntry:\n    r.append(await redirect({}))\nexcept sluice.ToolError as e:\n    r.append(e.code)\nprint(r)\nprint(len(await asyncio.gather(*[slow({}) for _ in range(64)])))\ntry:\n    await huge({})\nexcept sluice.ToolError as e:\n    print(e.code)";
    let body = json!({"code": code, "limits": {"max_tool_calls": 100}, "tools": [
        http_tool("redirect", &format!("{tools}/redirect")), http_tool("slow", &format!("{tools}/slow")),
        http_tool("huge", &format!("{tools}/huge"))]});
    let (_, done) = execute(&base, None, body).await;
    let stdout = done["result"]["stdout"].as_str().unwrap_or_default();
    ensure!(!stdout.contains("SECRET") && secret_hits.load(Ordering::SeqCst) == 0, "reached the secret: {done}");
    ensure!(stdout.ends_with("64\ntool_error\n"), "unexpected output: {done}");
    let peak_calls = most.load(Ordering::SeqCst);
    ensure!(peak_calls <= 16, "{peak_calls} calls of one execution in flight at once");
    Ok(measured.report(&format!(
        "6 private URLs refused (400), redirect not followed, {peak_calls} calls in flight at most, 100 MB reply cut"
    )))
}

/// Item 2 (https): an https tool behind a private CA, trusted with --http-tool-ca.
async fn item02_https_tools_work_with_an_operator_ca() -> Outcome {
    let dir = scratch("item02-tls");
    // A private authority, and a certificate for 127.0.0.1 it signed.
    let (ca, ca_key, cert, key, csr) = ("ca.pem", "ca.key", "cert.pem", "key.pem", "leaf.csr");
    std::fs::write(dir.join("leaf.ext"), "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n").unwrap();
    let steps: [&[&str]; 3] = [
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=sluice test CA",
            "-keyout",
            ca_key,
            "-out",
            ca,
        ],
        &["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", csr],
        &[
            "x509",
            "-req",
            "-in",
            csr,
            "-CA",
            ca,
            "-CAkey",
            ca_key,
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            "leaf.ext",
            "-out",
            cert,
        ],
    ];
    for step in steps {
        let made = Command::new("openssl").args(step).current_dir(&dir).stderr(Stdio::null()).status();
        ensure!(made.is_ok_and(|s| s.success()), "openssl {step:?} failed");
    }
    let (ca, cert, key) = (dir.join(ca), dir.join(cert), dir.join(key));
    let script = "import http.server, ssl, sys\nclass H(http.server.BaseHTTPRequestHandler):\n    def do_POST(self):\n        body = self.rfile.read(int(self.headers.get('content-length', 0)))\n        out = b'tls:' + body\n        self.send_response(200)\n        self.send_header('Content-Length', str(len(out)))\n        self.end_headers()\n        self.wfile.write(out)\n    def log_message(self, *a):\n        pass\ns = http.server.HTTPServer(('127.0.0.1', 0), H)\nctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\nctx.load_cert_chain(sys.argv[1], sys.argv[2])\ns.socket = ctx.wrap_socket(s.socket, server_side=True)\nprint(s.server_address[1], flush=True)\ns.serve_forever()";
    let mut https = Command::new("python3")
        .args(["-c", script, cert.to_str().unwrap(), key.to_str().unwrap()])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("python3: {e}"))?;
    let mut port = String::new();
    let mut stdout = https.stdout.take().unwrap();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
        port.push(byte[0] as char);
    }
    let url = format!("https://127.0.0.1:{}/", port.trim());
    let server = serve(&dir, &["--http-tool-allow", &url, "--http-tool-ca", ca.to_str().unwrap()], &[]);
    let measured = Measured::start(&server);
    let tool = json!({"name": "secure", "allowed_callers": ["code_execution_20260120"], "side_effects": "read_only",
                      "executor": {"type": "http", "url": url}});
    let (_, done) =
        execute(&server.base, None, json!({"code": "print(await secure({'a': 1}))", "tools": [tool]})).await;
    let _ = https.kill();
    ensure!(done["result"]["stdout"] == "tls:{\"a\":1}\n", "the https call failed: {done}");
    Ok(measured.report("an https tool answered through rustls, trusting the operator's CA"))
}

/// Item 3: arguments too deep are refused, an unreadable history does not stop the server from
/// starting, and it is marked.
async fn item03_no_script_can_stop_the_server_starting() -> Outcome {
    let dir = scratch("item03");
    let server = serve(&dir, &[], &[]);
    let measured = Measured::start(&server);
    let code = "import sluice\nv = 1\nfor _ in range(125):\n    v = [v]\ntry:\n    await t({'v': v})\nexcept sluice.ToolInputError as e:\n    print('refused:', e.code)";
    let (_, done) = execute(&server.base, None, json!({"code": code, "tools": [client_tool("t")]})).await;
    ensure!(done["result"]["stdout"] == "refused: invalid_input\n", "deep arguments were accepted: {done}");
    let report = measured.report("127-deep arguments refused");
    drop(server); // SIGKILL
    {
        // What a crash could leave: a running execution whose record cannot be read.
        let pool = sqlite(&dir).await;
        let now = 1_700_000_000_000i64;
        sqlx::query("INSERT INTO executions (id, container_id, owner, number, status, started_at) VALUES ('exec_unreadable', 'c-unreadable', 'anonymous', 1, 'running', $1)")
            .bind(now).execute(&pool).await.unwrap();
        sqlx::query("INSERT INTO audit_records (container_id, seq, kind, execution_id, recorded_at, body, prev_hash, hash) VALUES ('c-unreadable', 0, 'execution_started', 'exec_unreadable', $1, '{not json', '0', 'x')")
            .bind(now).execute(&pool).await.unwrap();
    }
    let restarted = serve(&dir, &[], &[]);
    let (_, listed) = call("GET", &format!("{}/v1/executions", restarted.base), None, None).await;
    let row = listed["data"].as_array().and_then(|rows| rows.iter().find(|r| r["id"] == "exec_unreadable").cloned());
    ensure!(row.as_ref().is_some_and(|r| r["outcome"] == "interrupted"), "the unreadable execution: {listed}");
    Ok(format!("{report}; restarted past an unreadable history, which is marked interrupted"))
}

/// Item 4: the host numbers calls: guest numbers cannot panic it or rewrite the ledger.
async fn item04_guest_call_numbers_change_nothing() -> Outcome {
    let dir = scratch("item04");
    let server = serve(&dir, &[], &[]);
    let (base, measured) = (server.base.clone(), Measured::start(&server));
    let code = "import sluice, _sluice_runtime as rt\nrt._calls.next_seq = 2**64 - 1\ntry:\n    await secret({})\nexcept sluice.ToolNotAllowedError:\n    print('refused')\nrt._calls.next_seq = 2**64 - 1\nprint(await ok({}))";
    let secret = json!({"name": "secret", "allowed_callers": ["direct"]});
    let (_, paused) = execute(&base, None, json!({"code": code, "tools": [secret, client_tool("ok")]})).await;
    ensure!(paused["status"] == "requires_action", "{paused}");
    let (_, done) = answer(&base, None, &paused, "fine").await;
    ensure!(done["result"]["stdout"] == "refused\nfine\n", "{done}");
    let (_, audit) = call("GET", &format!("{base}/v1/executions/{}", done["id"].as_str().unwrap()), None, None).await;
    let ledger = audit["ledger"].as_array().cloned().unwrap_or_default();
    let seen: Vec<(Value, Value)> = ledger.iter().map(|c| (c["seq"].clone(), c["status"].clone())).collect();
    ensure!(seen == [(json!(0), json!("refused")), (json!(1), json!("succeeded"))], "the ledger: {seen:?}");
    ensure!(ledger[0]["idempotency_key"] != ledger[1]["idempotency_key"], "idempotency keys repeat");
    let (health, _) = call("GET", &format!("{base}/healthz"), None, None).await;
    ensure!(health == 200, "the server is down");
    Ok(measured.report("u64::MAX guest numbers: ledger 0 refused, 1 succeeded; server up"))
}

/// Item 5: token counting is bounded: a megabyte of one character costs little, and says it is an
/// estimate.
async fn item05_token_counting_is_bounded() -> Outcome {
    let dir = scratch("item05");
    let server = serve(&dir, &[], &[]);
    let (base, pid) = (server.base.clone(), server.child.id());
    let (_, done) = execute(&base, None, json!({"code": "print('x' * 1_000_000)"})).await;
    ensure!(done["status"] == "completed", "{done}");
    let measured = Measured { pid, before: usage(pid) };
    let id = done["id"].as_str().unwrap().to_owned();
    let mut row = Value::Null;
    for _ in 0..100 {
        let (_, listed) = call("GET", &format!("{base}/v1/executions"), None, None).await;
        row = listed["data"]
            .as_array()
            .and_then(|r| r.iter().find(|e| e["id"] == id.as_str()).cloned())
            .unwrap_or_default();
        if !row["returned_tokens"].is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let spent = usage(pid).cpu.saturating_sub(measured.before.cpu);
    ensure!(row["tokens_estimated"] == true && row["returned_tokens"].as_i64() > Some(0), "{row}");
    ensure!(spent < Duration::from_secs(2), "counting took {spent:?} of CPU");
    Ok(measured
        .report(&format!("1 MB of 'x' counted in {:.0} ms of CPU, marked as an estimate", spent.as_secs_f64() * 1e3)))
}

/// Item 6: `max_calls_per_execution` holds across a restart (the counts travel with the run).
async fn item06_quota_counts_survive_a_restore() -> Outcome {
    let dir = scratch("item06");
    let server = serve(&dir, &[], &[]);
    let measured = Measured::start(&server);
    let code = "import sluice\nprint(await q({'n': 1}))\nprint(await q({'n': 2}))\ntry:\n    await q({'n': 3})\nexcept sluice.ToolNotAllowedError as e:\n    print('refused:', e.code)";
    let mut tool = client_tool("q");
    tool["max_calls_per_execution"] = json!(2);
    let (_, paused) = execute(&server.base, None, json!({"code": code, "tools": [tool]})).await;
    ensure!(paused["status"] == "requires_action", "{paused}");
    let report = measured.report("paused at the first call");
    terminate(server);
    let restarted = serve(&dir, &[], &[]);
    let base = restarted.base.clone();
    let (_, restored) =
        call("GET", &format!("{base}/v1/executions/{}", paused["id"].as_str().unwrap()), None, None).await;
    ensure!(restored["code"] == code, "the restored execution shows no code: {restored}");
    let (_, second) = answer(&base, None, &restored, "a").await;
    ensure!(second["status"] == "requires_action", "{second}");
    let (_, done) = answer(&base, None, &second, "b").await;
    ensure!(done["result"]["stdout"] == "a\nb\nrefused: quota_exceeded\n", "the quota reset: {done}");
    Ok(format!("{report}; after a restart the third call was refused; code shown"))
}

/// Item 7: a waiting execution stays answerable whatever another key does.
async fn item07_waiting_executions_stay_answerable() -> Outcome {
    let dir = scratch("item07");
    let server = serve(&dir, &["--api-key", "alpha", "--api-key", "beta"], &[]);
    let (base, measured) = (server.base.clone(), Measured::start(&server));
    let (_, waiting) =
        execute(&base, Some("alpha"), json!({"code": "print(await t({}))", "tools": [client_tool("t")]})).await;
    ensure!(waiting["status"] == "requires_action", "{waiting}");
    let flood = 10_050;
    let done = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let (base, done) = (base.clone(), done.clone());
            tokio::spawn(async move {
                let client = client();
                let (_, first) = execute(&base, Some("beta"), json!({"code": "n = 0"})).await;
                let container = first["container"]["id"].clone();
                while done.fetch_add(1, Ordering::SeqCst) < flood {
                    let body = json!({"container": container, "code": "n += 1"});
                    let _ = client
                        .post(format!("{base}/v1/executions"))
                        .bearer_auth("beta")
                        .header("content-type", "application/json")
                        .body(body.to_string())
                        .send()
                        .await;
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.unwrap();
    }
    let (status, answered) = answer(&base, Some("alpha"), &waiting, "still here").await;
    ensure!(status == 200 && answered["result"]["stdout"] == "still here\n", "{status} {answered}");
    Ok(measured.report(&format!("answered after another key ran {flood} executions")))
}

/// The server's CPU beyond the run time the execution was charged (its script's own).
fn uncharged(cpu: Duration, execution: &Value) -> Duration {
    cpu.saturating_sub(Duration::from_millis(execution["usage"]["time_ms"].as_u64().unwrap_or(0)))
}

/// Item 8: host CPU is bounded by what the guest paid: cancel floods, rollbacks after heavy
/// cells, replays, and floods of refused calls.
async fn item08_host_work_is_bounded() -> Outcome {
    let dir = scratch("item08");
    let server = serve(&dir, &["--quota", "replays_per_minute=3"], &[]);
    let (base, pid) = (server.base.clone(), server.child.id());
    let measured = Measured::start(&server);
    // (a) A million cancellations against ten thousand calls outstanding.
    let code = "import asyncio, _sluice_runtime as rt\npending = [asyncio.ensure_future(t({})) for _ in range(10_000)]\nawait asyncio.sleep(0.01)\norig = rt._calls.take_frame\ndef evil(wake):\n    f = orig(wake)\n    f['cancelled'] = list(range(1_000_000))\n    return f\nrt._calls.take_frame = evil\nawait t({})";
    let before = usage(pid).cpu;
    let (_, first) =
        execute(&base, None, json!({"code": code, "tools": [client_tool("t")], "limits": {"max_tool_calls": 20_000}}))
            .await;
    ensure!(first["status"] == "requires_action", "{}", first["status"]);
    let id = first["id"].as_str().unwrap().to_owned();
    let mut ended = Value::Null;
    for _ in 0..100 {
        (_, ended) = call("GET", &format!("{base}/v1/executions/{id}"), None, None).await;
        if ended["status"] != "requires_action" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let cancel_cpu = uncharged(usage(pid).cpu.saturating_sub(before), &ended);
    ensure!(ended["error"]["type"] == "guest_fault", "the cancel flood: {}", ended["error"]);
    ensure!(cancel_cpu < Duration::from_secs(2), "the cancel flood cost the host {cancel_cpu:?}");
    // (b) Heavy cells, then a stopped one: its rollback replays little.
    let (_, first) = execute(&base, None, json!({"code": "x = 0"})).await;
    let container = first["container"]["id"].clone();
    for _ in 0..12 {
        execute(&base, None, json!({"container": container, "code": "x += sum(i * i for i in range(400_000))"})).await;
    }
    let started = Instant::now();
    let (_, stopped) =
        execute(&base, None, json!({"container": container, "code": "while True: pass", "limits": {"time_ms": 200}}))
            .await;
    let stop_took = started.elapsed();
    ensure!(stopped["error"]["type"] == "execution_time_exceeded", "{stopped}");
    ensure!(stop_took < Duration::from_millis(1500), "a 200 ms limit answered after {stop_took:?}");
    // (c) Replays are rate limited per key.
    let target = first["id"].as_str().unwrap();
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(call("POST", &format!("{base}/v1/executions/{target}/replay"), None, None).await.0);
    }
    ensure!(statuses == [200, 200, 200, 429], "replays: {statuses:?}");
    // (d) Forty thousand refused calls.
    let code = "import asyncio, sluice\nfor _ in range(4):\n    await asyncio.gather(*[sluice.call_tool('nope', {}) for _ in range(10_000)], return_exceptions=True)\nprint('done')";
    let before = usage(pid).cpu;
    let (_, flood) = execute(&base, None, json!({"code": code, "limits": {"max_tool_calls": 100_000}})).await;
    let flood_cpu = uncharged(usage(pid).cpu.saturating_sub(before), &flood);
    ensure!(flood["result"]["stdout"] == "done\n", "{}", flood["result"]);
    ensure!(flood_cpu < Duration::from_secs(3), "40,000 refused calls cost the host {flood_cpu:?}");
    Ok(measured.report(&format!(
        "host CPU beyond the script's own: cancel flood {:.2} s (refused), 40k refusals {:.2} s; 200 ms stop after heavy cells answered in {:.0} ms; 4th replay 429",
        cancel_cpu.as_secs_f64(),
        flood_cpu.as_secs_f64(),
        stop_took.as_secs_f64() * 1e3
    )))
}

/// Item 9: the host enforces the output caps on the guest's final frame.
async fn item09_output_caps_hold_on_the_host() -> Outcome {
    let dir = scratch("item09");
    let server = serve(&dir, &[], &[]);
    let (base, measured) = (server.base.clone(), Measured::start(&server));
    let limits = json!({"max_output_bytes": 1024});
    let code = "import _sluice_runtime as rt\nrt.MAX_REPR_CHARS = 10**9\n'v' * (15 << 20)";
    let (_, repr) = execute(&base, None, json!({"code": code, "limits": limits})).await;
    let repr_len = repr["result"]["value_repr"].as_str().map_or(usize::MAX, str::len);
    ensure!(repr_len < 1200, "value_repr of {repr_len} bytes");
    let container = repr["container"]["id"].as_str().unwrap().to_owned();
    let body = json!({"container": container, "code": "raise Exception('m' * (30 << 20))", "limits": limits});
    let (_, raised) = execute(&base, None, body).await;
    ensure!(raised["result"]["return_code"] == 1, "{}", raised["result"]);
    let bundle = client().get(format!("{base}/v1/containers/{container}/export")).send().await.unwrap();
    let bytes = bundle.bytes().await.unwrap().len();
    ensure!(bytes < 256 << 10, "the audit kept {bytes} bytes for two tiny-limit executions");
    Ok(measured.report(&format!("15 MB repr cut to {repr_len} B; 30 MB message kept as {bytes} B of audit")))
}

/// Item 10: argument bytes per execution are bounded and not copied over and over.
async fn item10_large_arguments_are_bounded() -> Outcome {
    let dir = scratch("item10");
    let server = serve(&dir, &[], &[]);
    let measured = Measured::start(&server);
    let code = "import asyncio\nblob = 'x' * ((1 << 20) - 64)\nawait asyncio.gather(*[t({'blob': blob}) for _ in range(32)], return_exceptions=True)";
    let (_, paused) = execute(&server.base, None, json!({"code": code, "tools": [client_tool("t")]})).await;
    let handed_out = paused["tool_uses"].as_array().map_or(0, Vec::len);
    ensure!((1..=16).contains(&handed_out), "{handed_out} one-megabyte calls accepted");
    let grown = usage(measured.pid).peak_mb - measured.before.peak_mb;
    ensure!(grown < 400.0, "the server grew by {grown:.0} MB");
    Ok(measured.report(&format!("32 MB of arguments: {handed_out} calls accepted, peak grew {grown:.0} MB")))
}

/// Item 11: rEALCLOCK no longer gives the guest the real clock.
async fn item11_the_guest_never_sees_the_real_clock() -> Outcome {
    let dir = scratch("item11");
    let server = serve(&dir, &[], &[("REALCLOCK", "1")]);
    let measured = Measured::start(&server);
    let code =
        "import time\nt0 = time.time_ns()\nx = sum(range(300_000))\nt1 = time.time_ns()\nprint(t1 - t0 < 1_000_000)";
    let (_, done) = execute(&server.base, None, json!({"code": code})).await;
    ensure!(done["result"]["stdout"] == "True\n", "the guest saw time pass: {done}");
    Ok(measured.report("with REALCLOCK=1 the clock still moves 1 us per read"))
}

/// Item 12: operator maxima and per-key quotas.
async fn item12_maxima_and_quotas_are_the_operators() -> Outcome {
    let dir = scratch("item12");
    let args = ["--api-key", "alpha", "--max-limit", "memory_bytes=268435456", "--quota", "containers=1"];
    let server = serve(&dir, &[&args[..], &["--quota", "waiting_executions=1"]].concat(), &[]);
    let (base, measured) = (server.base.clone(), Measured::start(&server));
    let key = Some("alpha");
    let (big, body) = execute(&base, key, json!({"code": "1", "limits": {"memory_bytes": 536_870_912}})).await;
    ensure!(big == 400, "512 MiB allowed past a 256 MiB maximum: {big} {body}");
    let (_, waiting) = execute(&base, key, json!({"code": "await t({})", "tools": [client_tool("t")]})).await;
    ensure!(waiting["status"] == "requires_action", "{waiting}");
    let (second, body) = execute(&base, key, json!({"code": "await t({})", "tools": [client_tool("t")]})).await;
    ensure!(second == 429, "a second waiting execution: {second} {body}");
    // Its one container waits for a tool: nothing of its own to unload for another.
    let (another, body) = call("POST", &format!("{base}/v1/containers"), key, None).await;
    ensure!(another == 429 && body["error"]["type"] == "rate_limit_error", "a second live container: {another} {body}");
    let report = measured.report("512 MiB refused (400); 2nd waiting execution, 2nd busy container refused (429)");
    drop(server);
    // Requests in flight per key.
    let server = serve(&scratch("item12-requests"), &["--quota", "concurrent_requests=2"], &[]);
    let base = server.base.clone();
    // Each must still run when the third arrives 300 ms later: 10**7 items took under that
    // once freed ints went straight back to their free list, and the check raced.
    let busy: Vec<_> = (0..2)
        .map(|_| {
            let base = base.clone();
            tokio::spawn(async move { execute(&base, None, json!({"code": "x = sum(range(10**8))"})).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (third, body) = call("GET", &format!("{base}/v1/tools"), None, None).await;
    for request in busy {
        request.await.unwrap();
    }
    ensure!(third == 429, "a third request in flight for one key: {third} {body}");
    Ok(format!("{report}; 3rd request in flight refused (429)"))
}

/// The record hash 1ad40ef used: SHA-256 over the record, no key.
fn unkeyed_hash(prev: &str, container: &str, seq: i64, kind: &str, at: i64, body: &str) -> String {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    for part in [prev, container, &seq.to_string(), kind, &at.to_string(), body] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Item 13: the chain is sealed with a key outside the database; fork points and owners are
/// checked.
async fn item13_the_audit_chain_cannot_be_rewritten() -> Outcome {
    let dir = scratch("item13");
    let server = serve(&dir, &[], &[]);
    let (base, measured) = (server.base.clone(), Measured::start(&server));
    let (_, first) = execute(&base, None, json!({"code": "x = 1\nprint('original')"})).await;
    let container = first["container"]["id"].as_str().unwrap().to_owned();
    execute(&base, None, json!({"container": container, "code": "x += 1"})).await;
    let (_, fork) = call("POST", &format!("{base}/v1/containers/{container}/fork"), None, None).await;
    let report = measured.report("history written");
    terminate(server);
    let data = dir.to_str().unwrap();
    let verify = |dir: &str| sluice_command(&["audit", "verify", "--data-dir", dir]);
    ensure!(verify(data).status.code() == Some(0), "the untouched store does not verify");
    let copy = |name: &str| {
        let to = dir.join(name);
        std::fs::create_dir_all(&to).unwrap();
        // The WAL too: what the server wrote last may not be checkpointed into the database yet.
        for file in ["sluice.db", "sluice.db-wal", "sluice.db-shm", "server.key"] {
            if dir.join(file).exists() {
                std::fs::copy(dir.join(file), to.join(file)).unwrap();
            }
        }
        to
    };
    // (a) An edited record, with every hash after it recomputed (the key is not known).
    let edited = copy("edited");
    {
        let pool = sqlite(&edited).await;
        sqlx::query("DROP TRIGGER audit_records_append_only").execute(&pool).await.unwrap();
        let rows = sqlx::query_as::<_, (i64, String, i64, String)>(
            "SELECT seq, kind, recorded_at, body FROM audit_records WHERE container_id = $1 ORDER BY seq",
        )
        .bind(&container)
        .fetch_all(&pool)
        .await
        .unwrap();
        let mut prev = "0".repeat(64);
        for (seq, kind, at, body) in rows {
            let body = body.replace("print('original')", "print('forged')");
            let hash = unkeyed_hash(&prev, &container, seq, &kind, at, &body);
            sqlx::query(
                "UPDATE audit_records SET body = $1, prev_hash = $2, hash = $3 WHERE container_id = $4 AND seq = $5",
            )
            .bind(&body)
            .bind(&prev)
            .bind(&hash)
            .bind(&container)
            .bind(seq)
            .execute(&pool)
            .await
            .unwrap();
            prev = hash;
        }
    }
    let out = verify(edited.to_str().unwrap());
    let said = String::from_utf8_lossy(&out.stdout);
    // Either the edited record's seal, or (checked first when the fork sorts first) the fork
    // whose parent's record was rewritten.
    let caught = said.contains("seal") || said.contains("changed since");
    ensure!(out.status.code() == Some(1) && caught, "an edited chain verifies: {said}");
    // (b) The parent's history a fork depends on, deleted.
    let orphaned = copy("orphaned");
    {
        let pool = sqlite(&orphaned).await;
        for sql in [
            "DELETE FROM audit_records WHERE container_id = $1",
            "DELETE FROM containers WHERE id = $1",
            "DELETE FROM executions WHERE container_id = $1",
        ] {
            sqlx::query(sql).bind(&container).execute(&pool).await.unwrap();
        }
    }
    let out = verify(orphaned.to_str().unwrap());
    ensure!(
        out.status.code() == Some(1) && String::from_utf8_lossy(&out.stdout).contains("forked from"),
        "a fork without its parent verifies: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    // (c) The owner in the index, changed.
    let reowned = copy("reowned");
    {
        let pool = sqlite(&reowned).await;
        sqlx::query("UPDATE containers SET owner = 'key_attacker' WHERE id = $1")
            .bind(&container)
            .execute(&pool)
            .await
            .unwrap();
    }
    let out = verify(reowned.to_str().unwrap());
    ensure!(
        out.status.code() == Some(1) && String::from_utf8_lossy(&out.stdout).contains("owner"),
        "a changed owner verifies: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    ensure!(fork["id"].is_string(), "the fork failed: {fork}");
    Ok(format!("{report}; rehashed edit, deleted fork parent and changed owner all fail verify"))
}

/// Item 14: half-open requests are dropped and connections are capped.
async fn item14_half_open_requests_are_dropped() -> Outcome {
    let dir = scratch("item14");
    let server = serve(&dir, &["--header-read-timeout-ms", "1000", "--max-connections", "2"], &[]);
    let measured = Measured::start(&server);
    let address = server.base.trim_start_matches("http://").to_owned();
    let silent: Vec<std::net::TcpStream> = (0..2)
        .map(|_| {
            let mut stream = std::net::TcpStream::connect(&address).unwrap();
            stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n").unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            stream
        })
        .collect();
    let started = Instant::now();
    let (health, _) = call("GET", &format!("{}/healthz", server.base), None, None).await;
    let waited = started.elapsed();
    ensure!(health == 200, "a real request was not served: {health}");
    for mut stream in silent {
        let mut buffer = [0u8; 256];
        // Closed (or answered and closed) by the server; a held request would time out here.
        ensure!(stream.read(&mut buffer).is_ok(), "a half-open request was held");
    }
    Ok(measured.report(&format!(
        "half-open requests dropped after 1 s; the third connection waited {:.1} s for a place",
        waited.as_secs_f64()
    )))
}

/// Item 15: snapshots seal their container and owner: a swapped or re-owned snapshot is refused.
async fn item15_snapshots_are_sealed_to_their_container_and_owner() -> Outcome {
    let dir = scratch("item15");
    let args = ["--api-key", "alpha", "--api-key", "beta"];
    let server = serve(&dir, &args, &[]);
    let (base, measured) = (server.base.clone(), Measured::start(&server));
    let (_, a) = execute(&base, Some("alpha"), json!({"code": "secret = 'alpha-secret'"})).await;
    let (_, b) = execute(&base, Some("alpha"), json!({"code": "other = 1"})).await;
    let (a, b) = (a["container"]["id"].as_str().unwrap().to_owned(), b["container"]["id"].as_str().unwrap().to_owned());
    let report = measured.report("two containers saved");
    terminate(server);
    let beta_owner = {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(b"beta");
        format!("key_{}", digest[..8].iter().map(|b| format!("{b:02x}")).collect::<String>())
    };
    {
        let pool = sqlite(&dir).await;
        // A's snapshot passed off as B's, and A handed to beta in every unsealed place.
        sqlx::query("UPDATE container_snapshots SET snapshot = (SELECT snapshot FROM container_snapshots WHERE container_id = $1) WHERE container_id = $2")
            .bind(&a).bind(&b).execute(&pool).await.unwrap();
        sqlx::query("UPDATE container_snapshots SET owner = $1 WHERE container_id = $2")
            .bind(&beta_owner)
            .bind(&a)
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("UPDATE containers SET owner = $1 WHERE id = $2")
            .bind(&beta_owner)
            .bind(&a)
            .execute(&pool)
            .await
            .unwrap();
    }
    let restarted = serve(&dir, &args, &[]);
    let base = restarted.base.clone();
    let (swapped, body) = execute(&base, Some("alpha"), json!({"container": b, "code": "print(secret)"})).await;
    ensure!(
        swapped == 410 && body["error"]["code"] == "container_unrestorable",
        "a swapped snapshot: {swapped} {body}"
    );
    let (stolen, body) = execute(&base, Some("beta"), json!({"container": a, "code": "print(secret)"})).await;
    ensure!(stolen != 200 && !body.to_string().contains("alpha-secret"), "beta read alpha's state: {stolen} {body}");
    Ok(format!("{report}; swapped snapshot refused (410), re-owned snapshot refused ({stolen})"))
}

/// Item 16: the data directory and database are private.
async fn item16_the_data_directory_is_private() -> Outcome {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("item16");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = serve(&dir, &[], &[]);
    let measured = Measured::start(&server);
    execute(&server.base, None, json!({"code": "x = 1"})).await;
    let mode = |path: &Path| std::fs::metadata(path).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
    let modes = (mode(&dir), mode(&dir.join("sluice.db")), mode(&dir.join("server.key")));
    ensure!(modes == (0o700, 0o600, 0o600), "modes {:o} {:o} {:o}", modes.0, modes.1, modes.2);
    Ok(measured.report("data directory 0700 (was 0755), database and key 0600"))
}

/// Item 17: no shared temporary image cache, and a cache others may write is refused.
async fn item17_the_image_cache_is_never_shared() -> Outcome {
    let dir = scratch("item17");
    let run = |env: &[(&str, &str)]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sluice"));
        command.args(["serve", "--listen", "127.0.0.1:0", "--data-dir", dir.join("data").to_str().unwrap()]);
        command.env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
        command.envs(env.iter().copied()).stderr(Stdio::piped()).stdout(Stdio::null());
        let out = command.output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, stderr) = run(&[]);
    ensure!(code == Some(2) && stderr.contains("SLUICE_CACHE_DIR"), "without HOME: {code:?} {stderr}");
    let open = dir.join("open-cache");
    std::fs::create_dir_all(&open).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (code, stderr) = run(&[("SLUICE_CACHE_DIR", open.to_str().unwrap())]);
    ensure!(
        code == Some(2) && stderr.contains("may be written by other users"),
        "a world-writable cache: {code:?} {stderr}"
    );
    Ok("refused to start without a private cache directory (no HOME; mode 0777)".into())
}

/// Item 18: /metrics needs a key when keys are set (unless made public), and can be kept to
/// a scraper's key alone.
async fn item18_metrics_need_a_key() -> Outcome {
    let dir = scratch("item18");
    let server = serve(&dir, &["--api-key", "alpha"], &[]);
    let measured = Measured::start(&server);
    let (open, _) = call("GET", &format!("{}/metrics", server.base), None, None).await;
    let (keyed, _) = call("GET", &format!("{}/metrics", server.base), Some("alpha"), None).await;
    ensure!((open, keyed) == (401, 200), "metrics: {open} without a key, {keyed} with");
    let report = measured.report("401 without a key, 200 with");
    drop(server);
    let scraper = serve(&scratch("item18-key"), &["--api-key", "alpha", "--metrics-key", "scraper-secret"], &[]);
    let (tenant, _) = call("GET", &format!("{}/metrics", scraper.base), Some("alpha"), None).await;
    let (own, _) = call("GET", &format!("{}/metrics", scraper.base), Some("scraper-secret"), None).await;
    ensure!((tenant, own) == (401, 200), "--metrics-key: {tenant} for an API key, {own} for the scraper's");
    drop(scraper);
    let public = serve(&scratch("item18-public"), &["--api-key", "alpha", "--metrics-public"], &[]);
    let (open, _) = call("GET", &format!("{}/metrics", public.base), None, None).await;
    ensure!(open == 200, "--metrics-public: {open}");
    Ok(format!("{report}; only the scraper's key with --metrics-key; 200 with --metrics-public"))
}

/// Item 19: the executions list names only real tools.
async fn item19_only_real_tools_are_listed() -> Outcome {
    let dir = scratch("item19");
    let server = serve(&dir, &[], &[]);
    let (base, measured) = (server.base.clone(), Measured::start(&server));
    let code = "import sluice\ntry:\n    await sluice.call_tool('made_up<script>', {})\nexcept sluice.ToolError:\n    pass\nprint(await real({}))";
    let (_, paused) = execute(&base, None, json!({"code": code, "tools": [client_tool("real")]})).await;
    answer(&base, None, &paused, "ok").await;
    let (_, listed) = call("GET", &format!("{base}/v1/executions"), None, None).await;
    let tools = listed["data"][0]["tools"].clone();
    ensure!(tools == json!(["real"]), "listed tools: {tools}");
    Ok(measured.report("a made-up tool name stays out of the list"))
}

/// Item 20: killed at random points, the server keeps every acknowledged execution's effect.
async fn item20_nothing_acknowledged_is_lost_to_a_kill() -> Outcome {
    let dir = scratch("item20");
    let mut seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as u64;
    let mut random = move |below: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % below
    };
    let mut server = serve(&dir, &[], &[]);
    let (_, first) = execute(&server.base, None, json!({"code": "x = []"})).await;
    let container = first["container"]["id"].as_str().unwrap().to_owned();
    let mut acknowledged: Vec<u64> = Vec::new();
    let mut next = 0u64;
    let rounds = 5;
    for round in 0..rounds {
        let base = server.base.clone();
        let kill_after = Duration::from_millis(50 + random(400));
        let deadline = Instant::now() + kill_after;
        let pid = server.child.id();
        let killer = std::thread::spawn(move || {
            std::thread::sleep(kill_after);
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        });
        while Instant::now() < deadline + Duration::from_millis(50) {
            let body = json!({"container": container, "code": format!("x.append({next})")});
            let sent = client()
                .post(format!("{base}/v1/executions"))
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await;
            match sent {
                Ok(response) if response.status() == 200 => {
                    let done: Value =
                        serde_json::from_str(&response.text().await.unwrap_or_default()).unwrap_or_default();
                    if done["status"] == "completed" {
                        acknowledged.push(next);
                    }
                    next += 1;
                }
                _ => break,
            }
        }
        killer.join().unwrap();
        let _ = server.child.wait();
        next += 1; // the one in flight, if any, may or may not have completed
        server = serve(&dir, &[], &[]);
        let (_, state) = execute(&server.base, None, json!({"container": container, "code": "print(x)"})).await;
        let seen: Vec<u64> =
            serde_json::from_str(state["result"]["stdout"].as_str().unwrap_or("[]").trim()).unwrap_or_default();
        let kept_all = acknowledged.iter().all(|n| seen.contains(n));
        ensure!(kept_all, "round {round}: acknowledged {acknowledged:?}, state after restart {seen:?}: {state}");
        acknowledged = seen;
    }
    Ok(format!("{rounds} SIGKILLs at random points: every one of {} acknowledged executions kept", acknowledged.len()))
}

/// Item 21: a node started with another key refuses to start.
async fn item21_a_node_with_another_key_refuses_to_start() -> Outcome {
    let dir = scratch("item21");
    let server = serve(&dir, &["--server-key", "the first key, 32 bytes long...."], &[]);
    execute(&server.base, None, json!({"code": "x = 1"})).await;
    terminate(server);
    let out = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir", dir.to_str().unwrap()])
        .args(["--server-key", "another key, also long enough...."])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure!(out.status.code() == Some(2) && stderr.contains("another server key"), "{:?} {stderr}", out.status.code());
    Ok("refused at start, naming both key fingerprints".into())
}

/// Item 22: sIGTERM ends the server within the documented bound, whatever runs.
async fn item22_shutdown_is_bounded() -> Outcome {
    let dir = scratch("item22");
    let server = serve(&dir, &[], &[]);
    let base = server.base.clone();
    execute(&base, None, json!({"code": "print('x' * 1_000_000)"})).await;
    let spinning = tokio::spawn(async move {
        execute(&base, None, json!({"code": "while True: pass", "limits": {"time_ms": 600_000}})).await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (code, took) = terminate(server);
    let (_, spun) = spinning.await.unwrap();
    ensure!(code == Some(0) && took < Duration::from_secs(12), "exit {code:?} after {took:?}");
    ensure!(spun["error"]["type"] == "interrupted", "the running script: {spun}");
    Ok(format!("stopped in {:.1} s (bound 12 s) with a script spinning; it ended interrupted", took.as_secs_f64()))
}

/// Found by reviewing the fixes: a client that hangs up must not cut an execution off
/// half-way (leaving its container stuck mid-execution and its entry forever `running`).
async fn review_a_client_hanging_up_cuts_nothing_off() -> Outcome {
    let dir = scratch("hangup");
    let server = serve(&dir, &[], &[]);
    let (base, measured) = (server.base.clone(), Measured::start(&server));
    let (_, container) = call("POST", &format!("{base}/v1/containers"), None, None).await;
    let id = container["id"].as_str().unwrap().to_owned();
    let body = json!({"container": id, "code": "x = sum(range(3 * 10**6))\nprint('done')"}).to_string();
    let mut stream = std::net::TcpStream::connect(base.trim_start_matches("http://")).unwrap();
    let request = format!(
        "POST /v1/executions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    drop(stream); // the client goes away mid-execution
    let mut after = (0, Value::Null);
    for _ in 0..100 {
        after = execute(&base, None, json!({"container": id, "code": "print(x > 0)"})).await;
        if after.0 != 409 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    ensure!(after.1["result"]["stdout"] == "True\n", "after the hang-up: {} {}", after.0, after.1);
    let (_, listed) = call("GET", &format!("{base}/v1/executions?container={id}"), None, None).await;
    let statuses: Vec<Value> = listed["data"].as_array().unwrap().iter().map(|e| e["status"].clone()).collect();
    ensure!(statuses == [json!("completed"), json!("completed")], "{listed}");
    Ok(measured.report("the execution ran to its end and the container went on"))
}

/// Found by reviewing the fixes: a timer of a deleted container's waiting execution must not
/// keep the container's instance (a pool slot) for an hour.
async fn review_deleted_containers_free_their_slots() -> Outcome {
    let dir = scratch("slots");
    let server = serve(&dir, &["--max-containers", "4"], &[]);
    let (base, measured) = (server.base.clone(), Measured::start(&server));
    let body = json!({"code": "await t({})", "tools": [client_tool("t")], "limits": {"pending_timeout_ms": 3_600_000}});
    for round in 0..12 {
        let (status, waiting) = execute(&base, None, body.clone()).await;
        ensure!(status == 200, "round {round}: {status} {waiting}");
        let container = waiting["container"]["id"].as_str().unwrap();
        let (deleted, _) = call("DELETE", &format!("{base}/v1/containers/{container}"), None, None).await;
        ensure!(deleted == 204, "round {round}: delete {deleted}");
    }
    Ok(measured.report("12 waiting executions deleted with a 4-container pool: every slot came back"))
}

const ITEMS: &[(&str, Attack)] = &[
    ("item01_tools_belong_to_their_key", || Box::pin(item01_tools_belong_to_their_key())),
    ("item02_http_tools_cannot_reach_private_addresses", || {
        Box::pin(item02_http_tools_cannot_reach_private_addresses())
    }),
    ("item02_https_tools_work_with_an_operator_ca", || Box::pin(item02_https_tools_work_with_an_operator_ca())),
    ("item03_no_script_can_stop_the_server_starting", || Box::pin(item03_no_script_can_stop_the_server_starting())),
    ("item04_guest_call_numbers_change_nothing", || Box::pin(item04_guest_call_numbers_change_nothing())),
    ("item05_token_counting_is_bounded", || Box::pin(item05_token_counting_is_bounded())),
    ("item06_quota_counts_survive_a_restore", || Box::pin(item06_quota_counts_survive_a_restore())),
    ("item07_waiting_executions_stay_answerable", || Box::pin(item07_waiting_executions_stay_answerable())),
    ("item08_host_work_is_bounded", || Box::pin(item08_host_work_is_bounded())),
    ("item09_output_caps_hold_on_the_host", || Box::pin(item09_output_caps_hold_on_the_host())),
    ("item10_large_arguments_are_bounded", || Box::pin(item10_large_arguments_are_bounded())),
    ("item11_the_guest_never_sees_the_real_clock", || Box::pin(item11_the_guest_never_sees_the_real_clock())),
    ("item12_maxima_and_quotas_are_the_operators", || Box::pin(item12_maxima_and_quotas_are_the_operators())),
    ("item13_the_audit_chain_cannot_be_rewritten", || Box::pin(item13_the_audit_chain_cannot_be_rewritten())),
    ("item14_half_open_requests_are_dropped", || Box::pin(item14_half_open_requests_are_dropped())),
    ("item15_snapshots_are_sealed_to_their_container_and_owner", || {
        Box::pin(item15_snapshots_are_sealed_to_their_container_and_owner())
    }),
    ("item16_the_data_directory_is_private", || Box::pin(item16_the_data_directory_is_private())),
    ("item17_the_image_cache_is_never_shared", || Box::pin(item17_the_image_cache_is_never_shared())),
    ("item18_metrics_need_a_key", || Box::pin(item18_metrics_need_a_key())),
    ("item19_only_real_tools_are_listed", || Box::pin(item19_only_real_tools_are_listed())),
    ("item20_nothing_acknowledged_is_lost_to_a_kill", || Box::pin(item20_nothing_acknowledged_is_lost_to_a_kill())),
    ("item21_a_node_with_another_key_refuses_to_start", || Box::pin(item21_a_node_with_another_key_refuses_to_start())),
    ("item22_shutdown_is_bounded", || Box::pin(item22_shutdown_is_bounded())),
    ("review_a_client_hanging_up_cuts_nothing_off", || Box::pin(review_a_client_hanging_up_cuts_nothing_off())),
    ("review_deleted_containers_free_their_slots", || Box::pin(review_deleted_containers_free_their_slots())),
];

/// The longest one item may take.
const ITEM_TIMEOUT: Duration = Duration::from_secs(240);

fn main() -> std::process::ExitCode {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if std::env::args().any(|a| a == "--list") {
        for (name, _) in ITEMS {
            println!("{name}: test");
        }
        return std::process::ExitCode::SUCCESS;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let chosen: Vec<&(&str, Attack)> = ITEMS
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    let started = Instant::now();
    let mut failed = 0;
    let mut table = vec![
        "| item | result | what held, host CPU and memory of the server |".to_owned(),
        "| --- | --- | --- |".to_owned(),
    ];
    for (name, attack) in chosen {
        let item_started = Instant::now();
        let result = runtime.block_on(async {
            match tokio::time::timeout(ITEM_TIMEOUT, tokio::spawn(attack())).await {
                Ok(Ok(outcome)) => outcome,
                Ok(Err(panic)) => Err(format!("panicked: {panic}")),
                Err(_) => Err(format!("did not finish within {ITEM_TIMEOUT:?}")),
            }
        });
        let took = item_started.elapsed().as_secs_f64();
        let (verdict, detail) = match result {
            Ok(detail) => ("held", detail),
            Err(why) => {
                failed += 1;
                ("FAILED", why)
            }
        };
        eprintln!("{name}: {verdict} ({took:.1} s) {detail}");
        table.push(format!("| {name} | {verdict} | {detail} |"));
    }
    println!("\n{}\n", table.join("\n"));
    println!("attack suite: {} items, {failed} failed, {:.0} s", table.len() - 2, started.elapsed().as_secs_f64());
    runtime.shutdown_timeout(Duration::from_secs(1));
    if failed == 0 { std::process::ExitCode::SUCCESS } else { std::process::ExitCode::FAILURE }
}
