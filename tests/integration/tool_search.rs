//! Tool search: `POST /v1/tools/search` over each key's catalog (deferred tools found, not
//! listed), `sluice.search_tools` inside a script (on record and replayed), and recall on
//! GitHub's and Stripe's real catalogs.

use crate::api::send;
use crate::common;

#[path = "../../benches/tool_search/catalog.rs"]
mod catalog;

use axum::Router;
use axum::http::StatusCode;
use serde_json::{Value, json};
use sluice::{ApiKeys, AppState, SearchRequest, Service, ServiceConfig, ToolIndex, app};
use std::sync::Arc;

fn router(keys: &[&str]) -> Router {
    let service = Service::new(common::sandbox(), ServiceConfig::default());
    app(AppState { keys: Arc::new(ApiKeys::new(keys)), ..AppState::new(service) })
}

fn tool(name: &str, description: &str, deferred: bool) -> Value {
    json!({"name": name, "description": description, "defer_loading": deferred,
           "allowed_callers": ["code_execution_20260120"],
           "input_schema": {"type": "object", "properties": {"amount": {"type": "number", "description": "How much"}},
                            "required": ["amount"]}})
}

async fn search(app: &Router, key: &str, body: Value) -> (StatusCode, Value) {
    send(app, "POST", "/v1/tools/search", Some(body), Some(key)).await
}

#[tokio::test]
async fn the_api_searches_the_keys_own_catalog_by_words_or_pattern() {
    let app = router(&["key-a", "key-b"]);
    for body in [
        tool("convert_currency", "Convert an amount between currencies at today's rate", true),
        tool("send_invoice", "Email an invoice to a customer", false),
        tool("list_refunds", "List the refunds issued this month", false),
    ] {
        let (status, created) = send(&app, "POST", "/v1/tools", Some(body), Some("key-a")).await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
    }
    send(&app, "POST", "/v1/tools", Some(tool("b_private_tool", "Convert money for b", false)), Some("key-b")).await;

    let (status, found) = search(&app, "key-a", json!({"query": "change dollars into euros currency"})).await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found["type"], "tool_search_tool_search_result");
    assert_eq!(found["tool_references"][0], json!({"type": "tool_reference", "tool_name": "convert_currency"}));
    let first = &found["tools"][0];
    assert_eq!(first["defer_loading"], true, "a deferred tool is found by a search");
    assert_eq!(
        first["signature"],
        "async def convert_currency(*, amount: float) -> str:\n    \"\"\"Convert an amount between currencies at today's rate\"\"\""
    );
    assert!(first["score"].as_f64().unwrap() > 0.0);
    let names: Vec<&str> =
        found["tool_references"].as_array().unwrap().iter().filter_map(|r| r["tool_name"].as_str()).collect();
    assert!(!names.contains(&"b_private_tool"), "another key's tools are not searched: {names:?}");

    let (_, listed) = search(&app, "key-a", json!({"query": ""})).await;
    let listed: Vec<&str> =
        listed["tool_references"].as_array().unwrap().iter().filter_map(|r| r["tool_name"].as_str()).collect();
    assert_eq!(listed, ["list_refunds", "send_invoice"], "a listing leaves deferred tools out");

    let (_, by_pattern) = search(&app, "key-a", json!({"pattern": "^(send|list)_", "limit": 1})).await;
    assert_eq!(by_pattern["tool_references"], json!([{"type": "tool_reference", "tool_name": "list_refunds"}]));
    let (_, theirs) = search(&app, "key-b", json!({"pattern": "convert"})).await;
    assert_eq!(theirs["tool_references"], json!([{"type": "tool_reference", "tool_name": "b_private_tool"}]));

    for bad in [
        json!({"query": "x", "pattern": "x"}),
        json!({"limit": 3}),
        json!({"pattern": "(unclosed"}),
        json!({"pattern": "(?<=a)b"}),
        json!({"pattern": "a".repeat(201)}),
        json!({"query": "a".repeat(501)}),
        json!({"query": "x", "limit": 0}),
    ] {
        let (status, error) = search(&app, "key-a", bad.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {error}");
        assert_eq!(
            (error["error"]["type"].as_str(), error["error"]["code"].as_str()),
            (Some("invalid_request_error"), Some("invalid_tool_input")),
            "{error}"
        );
    }
    let (status, error) = search(&app, "key-a", json!({"query": "x", "top_k": 3})).await;
    assert_eq!(
        (status, error["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request")),
        "{error}"
    );
    let (status, _) = send(&app, "POST", "/v1/tools/search", Some(json!({"query": "x"})), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_script_finds_a_deferred_tool_calls_it_and_the_search_is_replayed() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("search-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = sluice::Store::sqlite_url(&dir);
    let store = Arc::new(sluice::Store::open(&url, &common::server_key()).await.unwrap());
    let app = app(AppState::new(Service::with_store(common::sandbox(), ServiceConfig::default(), store)));
    let direct_only = json!({"name": "convert_direct", "description": "Convert currencies (for the model only)"});
    let code = r#"import sluice
hits = await sluice.search_tools("turn dollars into euros", limit=3)
print([h["name"] for h in hits])
print(hits[0]["signature"].splitlines()[0])
try:
    await sluice.search_tools(pattern="(?<=x)y")
except sluice.ToolInputError as e:
    print("refused:", e.code)
by_pattern = await sluice.search_tools(pattern="invoice")
print([h["name"] for h in by_pattern])
convert = globals()[hits[0]["name"]]
print(await convert(amount=5))
"#;
    let body = json!({"code": code, "tools": [
        tool("convert_currency", "Convert an amount between currencies (dollars, euros, yen)", true),
        tool("send_invoice", "Email an invoice to a customer", false),
        direct_only,
    ]});
    let (status, paused) = send(&app, "POST", "/v1/executions", Some(body), None).await;
    assert_eq!(status, StatusCode::OK, "{paused}");
    assert_eq!(paused["status"], "requires_action", "{paused}");
    assert_eq!(paused["tool_uses"][0]["name"], "convert_currency");
    let id = paused["id"].as_str().unwrap().to_owned();
    let answer = json!({"tool_results": [{"type": "tool_result", "tool_use_id": paused["tool_uses"][0]["id"], "content": "4.6 EUR"}]});
    let (status, done) = send(&app, "POST", &format!("/v1/executions/{id}/tool_results"), Some(answer), None).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(
        done["result"]["stdout"],
        "['convert_currency']\nasync def convert_currency(*, amount: float) -> str:\nrefused: invalid_input\n['send_invoice']\n4.6 EUR\n",
        "the direct-only tool is not found from code: {done}"
    );

    let (_, audit) = send(&app, "GET", &format!("/v1/executions/{id}"), None, None).await;
    let ledger = audit["ledger"].as_array().unwrap();
    let tools: Vec<&str> = ledger.iter().filter_map(|c| c["tool"].as_str()).collect();
    assert_eq!(tools, ["sluice.search_tools", "sluice.search_tools", "sluice.search_tools", "convert_currency"]);
    assert_eq!(ledger[0]["status"], "succeeded");
    assert_eq!(ledger[0]["input"], json!({"limit": 3, "query": "turn dollars into euros"}));
    assert!(ledger[0]["result"].as_str().unwrap().contains("convert_currency"));
    assert_eq!(
        (ledger[1]["status"].as_str(), ledger[1]["error_code"].as_str()),
        (Some("failed"), Some("invalid_input"))
    );

    let (status, replayed) = send(&app, "POST", &format!("/v1/executions/{id}/replay"), None, None).await;
    assert_eq!((status, replayed["result"].as_str()), (StatusCode::OK, Some("identical")), "{replayed}");
}

/// Recall on real catalogs does not fall below what was measured when the ranking was built
/// (recall@5 by words: GitHub 72%, Stripe 74%; with WordLlama's model: 81% and 71%), less a
/// margin. The goal is 90%: see `cargo bench --bench tool_search` and the issue's note.
#[test]
fn recall_on_real_catalogs_holds_its_measured_floor() {
    let present = catalog::catalogs_dir().join("api.github.com.json").exists()
        && catalog::catalogs_dir().join("stripe.com.json").exists()
        && catalog::model_dir().join("embeddings.safetensors").exists();
    if !common::subject_present("the tool search catalogs and model (benches/tool_search/fetch-catalogs.sh)", present) {
        return;
    }
    let model = Arc::new(sluice::Embedder::load(&catalog::model_dir()).unwrap());
    for (name, file, words_floor, model_floor) in
        [("github", "api.github.com.json", 0.70, 0.79), ("stripe", "stripe.com.json", 0.72, 0.68)]
    {
        let tools = catalog::load(file).unwrap();
        let queries = catalog::queries(name);
        assert!(queries.len() >= 80, "{name}: {} queries", queries.len());
        for query in &queries {
            for expected in &query.expected {
                assert!(tools.iter().any(|t| t.name() == expected), "{name}: {expected} is not in the catalog");
            }
        }
        let everything: Vec<&catalog::Query> = queries.iter().collect();
        for (index, floor) in [
            (ToolIndex::new(tools.clone()), words_floor),
            (ToolIndex::with_model(tools.clone(), Some(model.clone())), model_floor),
        ] {
            let recall = catalog::recall(&everything, |q| {
                index.rank(q, 10).into_iter().map(|(tool, _)| tool.name().to_owned()).collect()
            });
            assert_eq!(recall.queries, queries.len());
            assert!(recall.at_5 >= floor, "{name}: recall@5 {:.3} is below {floor}", recall.at_5);
        }
        let request = SearchRequest { query: Some(queries[0].query.clone()), ..Default::default() };
        let same = sluice::search_tools(&tools, &request).unwrap();
        let index = ToolIndex::new(tools.clone());
        assert_eq!(
            same[0].tool.name(),
            index.rank(&queries[0].query, 1)[0].0.name(),
            "the service's search ranks the same"
        );
    }
}

/// `--search-model` loads the model at start (a directory without one stops the server with
/// the reason), and the service then finds a tool by meaning where no word matches.
#[tokio::test]
async fn serve_takes_a_search_model_and_refuses_a_broken_one() {
    let dir = catalog::model_dir();
    if !common::subject_present(
        "the search model (benches/tool_search/fetch-catalogs.sh)",
        dir.join("embeddings.safetensors").exists(),
    ) {
        return;
    }
    let broken =
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("no-model-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("tokenizer.json"), "{}").unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["serve", "--listen", "127.0.0.1:0", "--search-model", broken.to_str().unwrap()])
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && stderr.contains("--search-model"), "{stderr}");

    let data = broken.join("data");
    let server =
        crate::server::start(&["--data-dir", data.to_str().unwrap(), "--search-model", dir.to_str().unwrap()], &[]);
    let client = reqwest::Client::new();
    let tool = |name: &str, description: &str| json!({"name": name, "description": description, "allowed_callers": ["code_execution_20260120"]});
    for body in [
        tool("reverse_charge", "Undo a card charge and return the money."),
        tool("send_payout", "Move earnings to a bank account."),
    ] {
        let created = crate::server::post(&client, format!("{}/v1/tools", server.base), body).await;
        assert!(created["name"].is_string(), "{created}");
    }
    let by_words = ToolIndex::new(vec![
        sluice::Tool::new(
            serde_json::from_value(tool("reverse_charge", "Undo a card charge and return the money.")).unwrap(),
        )
        .unwrap(),
    ]);
    assert!(
        by_words.rank("give the buyer their cash back", 1).is_empty(),
        "no word of the query matches: the model must find it"
    );
    let query = json!({"query": "give the buyer their cash back", "limit": 1});
    let found = crate::server::post(&client, format!("{}/v1/tools/search", server.base), query).await;
    assert_eq!(found["tool_references"], json!([{"type": "tool_reference", "tool_name": "reverse_charge"}]), "{found}");
}
