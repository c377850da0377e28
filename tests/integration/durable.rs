//! Durable containers: state and paused executions survive a restart, the least recently used
//! containers are unloaded and come back, forks are independent, tampered snapshots are
//! refused, and two nodes share one PostgreSQL without running an execution twice.

use crate::common;
use crate::server;

use serde_json::{Value, json};
use sluice::Store;
use sluice::ToolDefinition;
use sluice::{ExecutionStatus, NewExecution, ServiceError};
use sluice::{Sandbox, SandboxConfig, Service, ServiceConfig};
use std::sync::Arc;

const OWNER: &str = "durable-test";

fn owner() -> String {
    OWNER.to_owned()
}

async fn sqlite_store() -> (Arc<Store>, String) {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("durable-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = Store::sqlite_url(&dir);
    (Arc::new(Store::open(&url, &common::server_key()).await.expect("sqlite store")), url)
}

/// Writes a snapshot into the store as a writer outside the service would: under a lease of
/// its own, handed back afterwards.
async fn write_as_another(store: &Store, stored: &sluice::StoredContainer) {
    let far = i64::MAX / 2;
    assert!(store.acquire_lease(&stored.container_id, "another writer", far).await.unwrap());
    assert!(store.save_container(stored, "another writer").await.unwrap());
    store.release_lease(&stored.container_id, "another writer").await.unwrap();
}

fn run_in(container: Option<uuid::Uuid>, code: &str) -> NewExecution {
    NewExecution { code: code.into(), container, ..Default::default() }
}

async fn stdout(service: &Service, container: uuid::Uuid, code: &str) -> String {
    let view = service.create_execution(&owner(), run_in(Some(container), code)).await.unwrap();
    assert_eq!(view.status, ExecutionStatus::Completed, "{:?}", view.error);
    view.outcome.unwrap().stdout
}

fn metric(service: &Service, name: &str) -> u64 {
    let text = service.metrics_text();
    let line = text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no metric {name}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[tokio::test]
async fn graceful_restart_keeps_state_and_a_paused_execution() {
    let (store, url) = sqlite_store().await;
    let sandbox = common::sandbox();
    let first = Service::with_store(sandbox.clone(), ServiceConfig::default(), store.clone());

    let setup = "import json\nclass Tally:\n    def __init__(self): self.n = 0\ntally = Tally()\ntally.n = 41";
    let created = first.create_execution(&owner(), run_in(None, setup)).await.unwrap();
    let container = created.container_id;
    let pause = "answer = await approve({'n': tally.n})\ntally.n += 1\nprint(answer, tally.n)";
    let request = NewExecution {
        code: pause.into(),
        container: Some(container),
        tools: vec![ToolDefinition::code_callable("approve")],
        ..Default::default()
    };
    let paused = first.create_execution(&owner(), request).await.unwrap();
    assert_eq!(paused.status, ExecutionStatus::RequiresAction);
    first.shutdown().await;

    let reopened = Arc::new(Store::open(&url, &common::server_key()).await.unwrap());
    let second = Service::with_store(sandbox, ServiceConfig::default(), reopened);
    let waiting = second.get_execution(&owner(), &paused.id).await.unwrap();
    assert_eq!(waiting.status, ExecutionStatus::RequiresAction);
    assert_eq!(waiting.tool_uses[0].input["n"], 41);
    let answer = vec![(paused.tool_uses[0].id.clone(), Ok("yes".to_owned()))];
    let done = second.submit_tool_results(&owner(), &paused.id, answer).await.unwrap();
    assert_eq!(done.status, ExecutionStatus::Completed, "{:?}", done.error);
    assert_eq!(done.outcome.unwrap().stdout, "yes 42\n");
    assert_eq!(
        stdout(&second, container, "print(type(tally).__name__, tally.n, json.dumps([1]))").await,
        "Tally 42 [1]\n"
    );
    assert_eq!(second.get_container(&owner(), container).await.unwrap().executions, 3);
    assert!(metric(&second, "sluice_containers_restored_total") >= 1);
}

/// A container in use since its last save, then cut off (the service dropped without a
/// shutdown, as a crash leaves it): it comes back with everything on record, and counts as
/// used when it was last used on record, not when it was last saved.
#[tokio::test]
async fn a_container_cut_off_comes_back_from_its_snapshot_and_its_record() {
    let (store, url) = sqlite_store().await;
    let sandbox = common::sandbox();
    let config = ServiceConfig {
        idle_timeout: std::time::Duration::from_millis(1500),
        snapshot_idle: std::time::Duration::from_secs(3600),
        ..ServiceConfig::default()
    };
    let first = Service::with_store(sandbox.clone(), config.clone(), store.clone());
    let container = first.create_execution(&owner(), run_in(None, "log = []")).await.unwrap().container_id;
    // A pause saves it; everything after is only on record.
    let request = NewExecution {
        code: "log.append(await ask({}))".into(),
        container: Some(container),
        tools: vec![ToolDefinition::code_callable("ask")],
        ..Default::default()
    };
    let paused = first.create_execution(&owner(), request).await.unwrap();
    let answer = vec![(paused.tool_uses[0].id.clone(), Ok("answered".to_owned()))];
    first.submit_tool_results(&owner(), &paused.id, answer).await.unwrap();
    let started = std::time::Instant::now();
    let mut n = 0;
    while started.elapsed() < std::time::Duration::from_millis(2000) {
        stdout(&first, container, &format!("log.append({n})")).await;
        n += 1;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    drop(first);

    let reopened = Arc::new(Store::open(&url, &common::server_key()).await.unwrap());
    let second = Service::with_store(sandbox, config, reopened);
    let expected: Vec<String> = std::iter::once("'answered'".to_owned()).chain((0..n).map(|i| i.to_string())).collect();
    assert_eq!(stdout(&second, container, "print(log)").await, format!("[{}]\n", expected.join(", ")));
}

#[tokio::test]
async fn least_recently_used_containers_are_unloaded_and_come_back() {
    let (store, _) = sqlite_store().await;
    let config = ServiceConfig { max_live_containers: 2, ..ServiceConfig::default() };
    let service = Service::with_store(common::sandbox(), config, store);
    let mut containers = Vec::new();
    for i in 0..5 {
        let view = service
            .create_execution(&owner(), run_in(None, &format!("mine = {i}\nitems = list(range({i}))")))
            .await
            .unwrap();
        containers.push(view.container_id);
    }
    assert!(metric(&service, "sluice_containers_evicted_total") >= 3);
    // Each one, in an order that forces more unloading, still holds its own state.
    for (i, container) in containers.iter().enumerate().rev().chain(containers.iter().enumerate()) {
        let out =
            stdout(&service, *container, "mine += 100\nprint(mine - 100 * (mine // 100), len(items))\nmine -= 100")
                .await;
        assert_eq!(out, format!("{i} {i}\n"));
    }
    assert!(metric(&service, "sluice_containers_restored_total") >= 5);
}

#[tokio::test]
async fn a_sandbox_with_few_slots_unloads_idle_containers_rather_than_refusing() {
    // The service's own live limit (256 by default) is far above the sandbox's two slots:
    // room must be made at the slots, not refused there.
    let (store, _) = sqlite_store().await;
    let sandbox = Sandbox::new(SandboxConfig { max_containers: 2, ..SandboxConfig::default() }).await.unwrap();
    let service = Service::with_store(sandbox, ServiceConfig::default(), store);
    assert_eq!(service.config().max_live_containers, 2);
    let mut containers = Vec::new();
    for i in 0..4 {
        let view = service.create_execution(&owner(), run_in(None, &format!("mine = {i}"))).await.unwrap();
        assert_eq!(view.status, ExecutionStatus::Completed, "{:?}", view.error);
        containers.push(view.container_id);
    }
    assert!(metric(&service, "sluice_containers_evicted_total") >= 2);
    for (i, container) in containers.iter().enumerate() {
        assert_eq!(stdout(&service, *container, "print(mine)").await, format!("{i}\n"));
    }
}

#[tokio::test]
async fn a_fork_copies_state_then_goes_its_own_way() {
    let (store, _) = sqlite_store().await;
    let service = Service::with_store(common::sandbox(), ServiceConfig::default(), store.clone());
    let parent = service
        .create_execution(&owner(), run_in(None, "seen = ['parent']\ndef hello(): return 'hi ' + seen[-1]"))
        .await
        .unwrap();
    let parent = parent.container_id;

    let child = service.fork_container(&owner(), parent).await.unwrap().id;
    assert_ne!(child, parent);
    assert_eq!(stdout(&service, child, "seen.append('child')\nprint(hello(), len(seen))").await, "hi child 2\n");
    assert_eq!(stdout(&service, parent, "print(hello(), len(seen))").await, "hi parent 1\n");

    // The fork's audit chain starts where the parent's stood, and its executions replay.
    let records = store.records(&child.to_string()).await.unwrap();
    assert_eq!(records[0].kind, "container_created");
    assert!(records[0].body.contains(&parent.to_string()), "{}", records[0].body);
    let in_child = service.create_execution(&owner(), run_in(Some(child), "print(hello())")).await.unwrap();
    let report = service.replay(&owner(), &in_child.id).await.unwrap();
    assert_eq!(report.divergence, None);
    assert_eq!(report.executions_replayed, 3, "the parent's setup, the child's append, then this one");

    // Unknown, foreign and paused containers are not forked.
    let unknown = service.fork_container(&owner(), uuid::Uuid::new_v4()).await;
    assert!(matches!(unknown, Err(ServiceError::NotFound(_))), "{unknown:?}");
    let foreign = service.fork_container(&"someone-else".to_owned(), parent).await;
    assert!(matches!(foreign, Err(ServiceError::NotFound(_))), "{foreign:?}");
    let request = NewExecution {
        code: "await ask({})".into(),
        container: Some(parent),
        tools: vec![ToolDefinition::code_callable("ask")],
        ..Default::default()
    };
    assert_eq!(service.create_execution(&owner(), request).await.unwrap().status, ExecutionStatus::RequiresAction);
    let paused = service.fork_container(&owner(), parent).await;
    assert!(matches!(paused, Err(ServiceError::Conflict(_))), "{paused:?}");
}

#[tokio::test]
async fn a_node_whose_lease_lapsed_can_neither_save_nor_renew() {
    let mut stores = vec![sqlite_store().await.0];
    if let Ok(base) = std::env::var("SLUICE_TEST_POSTGRES_URL") {
        let url = postgres_schema(&base).await;
        stores.push(Arc::new(Store::open(&url, &common::server_key()).await.expect("postgres store")));
    }
    for store in stores {
        let service = Service::with_store(common::sandbox(), ServiceConfig::default(), store.clone());
        let id = service.create_execution(&owner(), run_in(None, "x = 1")).await.unwrap().container_id.to_string();
        service.shutdown().await;
        let saved = store.load_container(&id).await.unwrap().expect("saved at shutdown");
        let mut older = saved.clone();
        older.snapshot.push(0);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;

        // Node b holds the lease: a's copy is not saved over the store's.
        assert!(store.acquire_lease(&id, "b", now + 60_000).await.unwrap());
        assert!(!store.save_container(&older, "a").await.unwrap(), "a holds no lease");
        assert_eq!(store.load_container(&id).await.unwrap().unwrap().snapshot, saved.snapshot);
        assert!(store.save_container(&saved, "b").await.unwrap(), "b holds the lease");
        assert!(!store.renew_lease(&id, "a", now + 60_000).await.unwrap(), "a cannot renew b's lease");
        assert!(store.renew_lease(&id, "b", now + 60_000).await.unwrap());

        // A's own lease, lapsed: still no save.
        store.release_lease(&id, "b").await.unwrap();
        assert!(store.acquire_lease(&id, "a", now - 1_000).await.unwrap());
        assert!(!store.save_container(&older, "a").await.unwrap(), "a's lease lapsed");
        assert!(!store.renew_lease(&id, "a", now + 60_000).await.unwrap(), "a lapsed lease is not renewed");
        assert_eq!(store.load_container(&id).await.unwrap().unwrap().snapshot, saved.snapshot);
    }
}

#[tokio::test]
async fn tampered_or_foreign_snapshots_are_refused() {
    let (store, url) = sqlite_store().await;
    let sandbox = common::sandbox();
    let first = Service::with_store(sandbox.clone(), ServiceConfig::default(), store.clone());
    let a = first.create_execution(&owner(), run_in(None, "x = 1")).await.unwrap().container_id;
    let b = first.create_execution(&owner(), run_in(None, "x = 2")).await.unwrap().container_id;
    first.shutdown().await;

    // One flipped byte in the middle of a's snapshot.
    let mut stored = store.load_container(&a.to_string()).await.unwrap().expect("a was saved");
    let middle = stored.snapshot.len() / 2;
    stored.snapshot[middle] ^= 0x40;
    write_as_another(&store, &stored).await;

    let reopened = Arc::new(Store::open(&url, &common::server_key()).await.unwrap());
    let second = Service::with_store(sandbox.clone(), ServiceConfig::default(), reopened.clone());
    let tampered = second.create_execution(&owner(), run_in(Some(a), "print(x)")).await;
    assert!(matches!(tampered, Err(ServiceError::Unrestorable(..))), "{tampered:?}");
    assert_eq!(stdout(&second, b, "print(x)").await, "2\n", "the others still serve");
    second.shutdown().await;

    // A server with another key refuses the (intact) snapshot too.
    let other_key =
        SandboxConfig { snapshot_key: b"another server's key, 32 bytes!!".to_vec(), ..SandboxConfig::default() };
    let stranger = Service::with_store(Sandbox::new(other_key).await.unwrap(), ServiceConfig::default(), reopened);
    let foreign = stranger.create_execution(&owner(), run_in(Some(b), "print(x)")).await;
    assert!(matches!(foreign, Err(ServiceError::Unrestorable(..))), "{foreign:?}");
}

/// A snapshot sealed by this deployment but made by an older build (here: its format number
/// turned back and sealed as builds before format 4 sealed, with HMAC-SHA256) is not read;
/// the container is rebuilt from its audit trail, state included.
#[tokio::test]
async fn a_snapshot_from_another_build_is_rebuilt_from_the_audit_trail() {
    use hmac::{Hmac, Mac};
    const SNAPSHOT_KEY: &[u8] = b"the snapshot key of this test, 32";
    let (store, url) = sqlite_store().await;
    let sandbox =
        Sandbox::new(SandboxConfig { snapshot_key: SNAPSHOT_KEY.to_vec(), ..SandboxConfig::default() }).await.unwrap();
    let first = Service::with_store(sandbox.clone(), ServiceConfig::default(), store.clone());
    let setup = "seen = [1, 2]\ndef grow(n):\n    seen.append(n)\n    return len(seen)";
    let id = first.create_execution(&owner(), run_in(None, setup)).await.unwrap().container_id;
    assert_eq!(stdout(&first, id, "print(grow(3))").await, "3\n");
    first.shutdown().await;

    // Reseal the saved snapshot with its header's format set back to 2.
    let mut stored = store.load_container(&id.to_string()).await.unwrap().expect("saved at shutdown");
    let (magic, tag) = (8, 32);
    let body_start = magic + tag;
    let header_len = u32::from_le_bytes(stored.snapshot[body_start..body_start + 4].try_into().unwrap()) as usize;
    let header = &mut stored.snapshot[body_start + 4..body_start + 4 + header_len];
    let text = String::from_utf8(header.to_vec()).unwrap();
    assert!(text.starts_with(r#"{"format":4,"#), "{text}");
    header[10] = b'2';
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(SNAPSHOT_KEY).unwrap();
    mac.update(&stored.snapshot[body_start..]);
    let resealed = mac.finalize().into_bytes();
    stored.snapshot[magic..body_start].copy_from_slice(&resealed);
    write_as_another(&store, &stored).await;

    let reopened = Arc::new(Store::open(&url, &common::server_key()).await.unwrap());
    let second = Service::with_store(sandbox, ServiceConfig::default(), reopened.clone());
    assert_eq!(stdout(&second, id, "print(grow(4), seen)").await, "4 [1, 2, 3, 4]\n", "rebuilt, state and all");
    second.shutdown().await;
    let saved_again = reopened.load_container(&id.to_string()).await.unwrap().expect("saved again");
    assert_ne!(saved_again.snapshot, stored.snapshot, "the rebuilt container was saved in this build's format");
}

/// A fresh schema in the machine's PostgreSQL, as a URL that selects it.
async fn postgres_schema(base: &str) -> String {
    use sqlx::Connection;
    let schema = format!("durable_{}", uuid::Uuid::new_v4().simple());
    let mut admin = sqlx::PgConnection::connect(base).await.expect("postgres");
    sqlx::query(&format!("CREATE SCHEMA {schema}")).execute(&mut admin).await.unwrap();
    let separator = if base.contains('?') { '&' } else { '?' };
    format!("{base}{separator}options=-c%20search_path%3D{schema}")
}

/// The server key the nodes of a test share.
const SHARED_KEY: &str = "a key both nodes share, for the test";

fn node(name: &str, url: &str, dir: &std::path::Path) -> server::Server {
    let dir = dir.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    server::start(
        &["--database-url", url, "--node", name, "--lease-ttl-ms", "2000", "--data-dir", dir.to_str().unwrap()],
        &[("SLUICE_SERVER_KEY", SHARED_KEY)],
    )
}

async fn execute(client: &reqwest::Client, base: &str, body: Value) -> Value {
    post_retrying(client, format!("{base}/v1/executions"), body).await
}

/// Posts `body`, again while the answer is a conflict that says "try again" (another node
/// holds the container, or its lease lapsed while it was restored): what a client is asked
/// to do when a loaded node hands a container back later than the wait.
async fn post_retrying(client: &reqwest::Client, url: String, body: Value) -> Value {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let out = server::post(client, url.clone(), body.clone()).await;
        let again = out["error"]["code"] == "conflict"
            && out["error"]["message"].as_str().is_some_and(|m| m.ends_with("; try again"));
        if !again || std::time::Instant::now() > give_up {
            return out;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn two_nodes_share_containers_through_postgres() {
    let base_url = std::env::var("SLUICE_TEST_POSTGRES_URL");
    if !common::subject_present("PostgreSQL (SLUICE_TEST_POSTGRES_URL)", base_url.is_ok()) {
        return;
    }
    let base_url = base_url.unwrap();
    let url = postgres_schema(&base_url).await;
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("nodes-{}", uuid::Uuid::new_v4()));
    let a = node("a", &url, &dir);
    let b = node("b", &url, &dir);
    let client = reqwest::Client::new();
    let approve = json!([{"name": "approve", "input_schema": {"type": "object"}, "allowed_callers": ["code_execution_20250825"]}]);

    let first = execute(&client, &a.base, json!({"code": "n = 0\nlog = []"})).await;
    let container = first["container"]["id"].as_str().expect("a container").to_owned();
    // Alternate nodes: each sees what the other did.
    for turn in 1..=6 {
        let node = if turn % 2 == 0 { &a } else { &b };
        let body = json!({"container": container, "code": format!("n += 1\nlog.append({turn})\nprint(n)")});
        let out = execute(&client, &node.base, body).await;
        assert_eq!(out["status"], "completed", "turn {turn}: {out}");
        assert_eq!(out["result"]["stdout"], format!("{turn}\n"), "turn {turn}: {out}");
    }
    // Paused on a, answered on b.
    let body = json!({"container": container, "tools": approve, "code": "ok = await approve({'n': n})\nn += 10\nprint(ok, n)"});
    let paused = execute(&client, &a.base, body).await;
    assert_eq!(paused["status"], "requires_action", "{paused}");
    let call = paused["tool_uses"][0]["id"].as_str().unwrap();
    let answer = json!({"tool_results": [{"type": "tool_result", "tool_use_id": call, "content": "approved"}]});
    let resumed = post_retrying(
        &client,
        format!("{}/v1/executions/{}/tool_results", b.base, paused["id"].as_str().unwrap()),
        answer,
    )
    .await;
    assert_eq!(resumed["result"]["stdout"], "approved 16\n", "{resumed}");

    // A runs one more, then dies without a word; b carries on with the state intact.
    let out = execute(&client, &a.base, json!({"container": container, "code": "n += 1\nprint(n)"})).await;
    assert_eq!(out["result"]["stdout"], "17\n", "{out}");
    drop(a);
    let out = execute(&client, &b.base, json!({"container": container, "code": "print(n, log)"})).await;
    assert_eq!(out["result"]["stdout"], "17 [1, 2, 3, 4, 5, 6]\n", "{out}");

    // The trail: every execution completed once, none left running, chains verify.
    let list = server::get(&client, format!("{}/v1/executions?container={container}", b.base)).await;
    let executions = list["data"].as_array().unwrap_or_else(|| panic!("{list}"));
    assert_eq!(executions.len(), 10, "{list}");
    let mut ids: Vec<&str> = executions.iter().map(|e| e["id"].as_str().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 10, "no execution is on record twice");
    assert!(executions.iter().all(|e| e["status"] == "completed"), "{list}");
    b.stop();
    let verify = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["audit", "verify", "--database-url", &url])
        .env("SLUICE_SERVER_KEY", SHARED_KEY)
        .output()
        .unwrap();
    assert!(verify.status.success(), "{}", String::from_utf8_lossy(&verify.stderr));
}
