//! The audit trail: one story, run on SQLite and (when `SLUICE_TEST_POSTGRES_URL` is set, as
//! CI sets it) on PostgreSQL. Records are written before a step is reported, survive a
//! restart, verify, filter, export, and replay identically; tampering shows.

use crate::common;

use serde_json::json;
use sluice::LimitOverrides;
use sluice::ToolDefinition;
use sluice::replay;
use sluice::{ContainerHistory, ExecutionFilter, Store, read_bundle, verify_chain, write_bundle};
use sluice::{ExecutionStatus, NewExecution};
use sluice::{Service, ServiceConfig};
use std::sync::Arc;

const OWNER: &str = "audit-test";

/// A store of its own: a fresh SQLite file, or a fresh PostgreSQL schema.
async fn fresh_store(postgres: Option<&str>) -> (Store, String) {
    match postgres {
        None => {
            let dir =
                std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("audit-{}", uuid::Uuid::new_v4()));
            std::fs::create_dir_all(&dir).unwrap();
            let url = Store::sqlite_url(&dir);
            (Store::open(&url, &common::server_key()).await.expect("sqlite store"), url)
        }
        Some(base) => {
            use sqlx::Connection;
            let schema = format!("audit_{}", uuid::Uuid::new_v4().simple());
            let mut admin = sqlx::PgConnection::connect(base).await.expect("postgres");
            sqlx::query(&format!("CREATE SCHEMA {schema}")).execute(&mut admin).await.unwrap();
            let separator = if base.contains('?') { '&' } else { '?' };
            let url = format!("{base}{separator}options=-c%20search_path%3D{schema}");
            (Store::open(&url, &common::server_key()).await.expect("postgres store"), url)
        }
    }
}

fn client_tool(name: &str) -> ToolDefinition {
    let mut tool = ToolDefinition::code_callable(name);
    tool.input_schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    tool
}

async fn run_story(postgres: Option<&str>) {
    let (store, url) = fresh_store(postgres).await;
    let store = Arc::new(store);
    let sandbox = common::sandbox();
    let service = Service::with_store(sandbox.clone(), ServiceConfig::default(), store.clone());
    let owner = OWNER.to_owned();

    // 1. An execution that pauses on a client tool (with a coerced argument) and resumes.
    let code = "import json, sluice\nrows = json.loads(await fetch({'n': '3'}))\nsluice.count('rows', len(rows))\nprint(sum(rows))";
    let request = NewExecution { code: code.into(), tools: vec![client_tool("fetch")], ..Default::default() };
    let paused = service.create_execution(&owner, request).await.unwrap();
    assert_eq!(paused.status, ExecutionStatus::RequiresAction);
    let container = paused.container_id;
    // The step is on record before it was reported: the call shows as dispatched.
    let records = store.records(&container.to_string()).await.unwrap();
    let kinds: Vec<&str> = records.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds, ["container_created", "execution_started", "tool_call"]);
    assert!(records[2].body.contains("\"status\":\"dispatched\""));
    let answer = vec![(paused.tool_uses[0].id.clone(), Ok("[1, 2, 3]".to_owned()))];
    let first = service.submit_tool_results(&owner, &paused.id, answer).await.unwrap();
    assert_eq!(first.status, ExecutionStatus::Completed);
    assert_eq!(first.outcome.as_ref().unwrap().stdout, "6\n");

    // 2. A Python error, and 3. an execution a limit stops (rolled back), in the same container.
    let python_error = NewExecution {
        code: "total = 10\nraise KeyError('gone')".into(),
        container: Some(container),
        ..Default::default()
    };
    let second = service.create_execution(&owner, python_error).await.unwrap();
    let limits = LimitOverrides { time_ms: Some(150), ..Default::default() };
    let spin = NewExecution {
        code: "total = 99\nwhile True: pass".into(),
        container: Some(container),
        limits,
        ..Default::default()
    };
    let third = service.create_execution(&owner, spin).await.unwrap();
    assert_eq!(third.status, ExecutionStatus::Failed);
    let last =
        NewExecution { code: "print(total + sum(rows))".into(), container: Some(container), ..Default::default() };
    let fourth = service.create_execution(&owner, last).await.unwrap();
    assert_eq!(fourth.outcome.as_ref().unwrap().stdout, "16\n");

    // After a restart the executions come from the store, ledger and all.
    let reopened = Arc::new(Store::open(&url, &common::server_key()).await.unwrap());
    let restarted = Service::with_store(sandbox.clone(), ServiceConfig::default(), reopened.clone());
    let stored = restarted.get_execution(&owner, &first.id).await.unwrap();
    assert_eq!(stored.code, code);
    assert_eq!(stored.outcome.as_ref().unwrap().stdout, "6\n");
    assert_eq!(stored.outcome.as_ref().unwrap().counts["rows"], json!(3).as_number().unwrap().clone());
    assert_eq!(stored.ledger.len(), 1);
    assert_eq!(stored.ledger[0].input["n"], 3);
    assert_eq!(stored.ledger[0].raw_input.as_ref().unwrap()["n"], "3");
    assert_eq!(stored.ledger[0].result.as_deref(), Some("[1, 2, 3]"));
    assert!(restarted.get_execution(&"someone-else".to_owned(), &first.id).await.is_err(), "owners stay apart");

    // Listing filters by container, outcome and tool.
    let list = |filter: ExecutionFilter| {
        let restarted = restarted.clone();
        async move { restarted.list_executions(&owner_of(), filter).await.unwrap().data }
    };
    let in_container = list(ExecutionFilter { container_id: Some(container.to_string()), ..Default::default() }).await;
    assert_eq!(in_container.len(), 4);
    let with_fetch = list(ExecutionFilter { tool: Some("fetch".into()), ..Default::default() }).await;
    assert_eq!(with_fetch.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), [first.id.as_str()]);
    let errors = list(ExecutionFilter { outcome: Some("python_error".into()), ..Default::default() }).await;
    assert_eq!(errors[0].id, second.id);
    let stopped = list(ExecutionFilter { outcome: Some("execution_time_exceeded".into()), ..Default::default() }).await;
    assert_eq!(stopped[0].id, third.id);

    // Every chain verifies, and every execution replays identically (the stopped one too).
    let report = reopened.verify().await.unwrap();
    assert!(report.broken.is_none(), "{:?}", report.broken);
    let records = reopened.records(&container.to_string()).await.unwrap();
    let history = ContainerHistory::from_records(&container.to_string(), &records).unwrap();
    for id in [&first.id, &second.id, &third.id, &fourth.id] {
        let replayed = replay(&sandbox, &history, id, &Default::default()).await.unwrap();
        assert_eq!(replayed.divergence, None, "{id}");
    }
    assert_eq!(
        replay(&sandbox, &history, &fourth.id, &Default::default()).await.unwrap().executions_replayed,
        3,
        "the stopped one was rolled back"
    );

    // A bundle replays offline; editing its code or a result shows as a divergence.
    let mut bundle = Vec::new();
    write_bundle(&container.to_string(), &records, &mut bundle).unwrap();
    let text = String::from_utf8(bundle).unwrap();
    let (id, from_bundle) = read_bundle(&text).unwrap();
    assert_eq!(verify_chain(store.chain_key(), &id, &from_bundle), Ok(()));
    let edited_result = text.replace(r#"\"result\":\"[1, 2, 3]\""#, r#"\"result\":\"[1, 2, 4]\""#);
    assert_ne!(edited_result, text);
    let (_, tampered) = read_bundle(&edited_result).unwrap();
    assert!(verify_chain(store.chain_key(), &id, &tampered).is_err());
    let tampered_history = ContainerHistory::from_records(&id, &tampered).unwrap();
    let divergence =
        replay(&sandbox, &tampered_history, &first.id, &Default::default()).await.unwrap().divergence.unwrap();
    assert!(divergence.contains("stdout differs"), "{divergence}");
    let edited_code = text.replace("print(sum(rows))", "print(max(rows))");
    let (_, tampered) = read_bundle(&edited_code).unwrap();
    let divergence =
        replay(&sandbox, &ContainerHistory::from_records(&id, &tampered).unwrap(), &first.id, &Default::default())
            .await
            .unwrap()
            .divergence;
    assert!(divergence.is_some());

    // The store refuses edits, and notices a deleted record.
    let update = "UPDATE audit_records SET body = 'x' WHERE seq = 1";
    assert!(sqlx_raw(&url, update).await.is_err(), "records are append-only");
    sqlx_raw(&url, &format!("DELETE FROM audit_records WHERE container_id = '{container}' AND seq = 2")).await.unwrap();
    let broken = Store::open(&url, &common::server_key())
        .await
        .unwrap()
        .verify()
        .await
        .unwrap()
        .broken
        .expect("a deleted record shows");
    assert_eq!((broken.container_id, broken.seq), (container.to_string(), 2));

    // Retention removes whole histories only, by command.
    let pruned = reopened.prune(std::time::SystemTime::now() + std::time::Duration::from_secs(60)).await.unwrap();
    assert!(pruned >= 1);
    assert!(reopened.verify().await.unwrap().broken.is_none());
    if let Some(schema) = url.split("search_path%3D").nth(1) {
        sqlx_raw(postgres.unwrap(), &format!("DROP SCHEMA {schema} CASCADE")).await.unwrap();
    }
}

fn owner_of() -> String {
    OWNER.to_owned()
}

async fn sqlx_raw(url: &str, sql: &str) -> Result<(), sqlx::Error> {
    use sqlx::{Connection, Executor};
    sqlx::any::install_default_drivers();
    let mut connection = sqlx::AnyConnection::connect(url).await?;
    connection.execute(sql).await.map(|_| ())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_story_on_sqlite() {
    run_story(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_story_on_postgres() {
    let url = std::env::var("SLUICE_TEST_POSTGRES_URL");
    if common::subject_present("PostgreSQL (SLUICE_TEST_POSTGRES_URL)", url.is_ok()) {
        run_story(Some(&url.unwrap())).await;
    }
}

/// A dispatcher that hands every call to the (absent) client.
struct ClientOnly;

impl sluice::Dispatcher for ClientOnly {
    async fn dispatch(
        &self,
        _admission: &sluice::Admission,
        _call: &sluice::ToolCall,
        _context: &sluice::CallContext,
    ) -> sluice::Dispatch {
        sluice::Dispatch::Client
    }
}

/// Item 3 of the security review: an execution the host failed to run stayed `running` on
/// record forever, with no finish record.
#[tokio::test]
async fn item03_an_execution_the_host_fails_still_gets_a_finish_record() {
    use sluice::{Event, MemoryRecorder};
    use sluice::{Moved, Run, RunContext};
    let mut container = common::sandbox().create_container().await.unwrap();
    let recorder = Arc::new(MemoryRecorder::default());
    let context = |id: &str| RunContext {
        execution_id: id.into(),
        container_id: container.id().to_string(),
        owner: OWNER.into(),
        number: 1,
    };
    let tools = || sluice::Toolset::from_definitions([ToolDefinition::code_callable("t")]).unwrap();
    let limits = sluice::Limits::default();
    let (first_context, second_context) = (context("exec_waiting"), context("exec_failed"));
    let first = Run::new(first_context, tools(), limits, recorder.clone());
    let paused = first.start(&mut container, "await t({})", &ClientOnly).await;
    assert!(matches!(paused, Moved::Waiting(_)));
    // A second execution in a container that is mid-execution fails in the host.
    let second = Run::new(second_context, tools(), limits, recorder.clone());
    let failed = second.start(&mut container, "print(1)", &ClientOnly).await;
    assert!(matches!(failed, Moved::Failed { .. }));
    let events = recorder.events.lock().unwrap();
    let finished = events.iter().find_map(|(_, event)| match event {
        Event::ExecutionFinished(f) if f.execution_id == "exec_failed" => Some(f.clone()),
        _ => None,
    });
    let finished = finished.expect("the failed execution has a finish record");
    assert_eq!((finished.status.as_str(), finished.outcome.as_str()), ("failed", "internal_error"));
    assert!(finished.error_message.unwrap_or_default().contains("already running"));
}
