//! The documents stay true: the design's file map is `src/`, its route table is the router,
//! the ABI tables name the imports the host defines, and every test or file a document names
//! exists.

use crate::common;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use sluice::{AppState, Service, ServiceConfig, app};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tower::ServiceExt;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(root().join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// The text of the section of `markdown` whose `## ` heading starts with `heading`.
fn section<'a>(markdown: &'a str, heading: &str) -> &'a str {
    let start = markdown.find(&format!("\n## {heading}")).unwrap_or_else(|| panic!("no section {heading:?}"));
    let rest = &markdown[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    &rest[..end]
}

/// The backticked spans of `line`.
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

fn files_under(dir: &Path, extension: &str, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, extension, out);
        } else if path.extension().is_some_and(|e| e == extension) {
            out.insert(path.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The files section 10 of `docs/design.md` lists: a bold heading with a backticked folder
/// sets the folder of the bullets under it (no folder: paths from the repository's root); a
/// bullet names one or more files before its colon.
fn mapped_files() -> BTreeSet<String> {
    let design = read("docs/design.md");
    let mut folder = String::new();
    let mut listed = BTreeSet::new();
    for line in section(&design, "10.").lines() {
        if line.starts_with("**") {
            folder = code_spans(line).first().map(|f| f.to_string()).unwrap_or_default();
        } else if let Some(bullet) = line.strip_prefix("- ") {
            let names = bullet.split_once(": ").map_or(bullet, |(names, _)| names);
            for name in code_spans(names) {
                listed.insert(format!("{folder}{name}"));
            }
        }
    }
    listed
}

#[test]
fn the_design_maps_every_source_file() {
    let listed = mapped_files();
    let mut sources = BTreeSet::new();
    files_under(&root().join("src"), "rs", &mut sources);
    files_under(&root().join("sandbox-images/python/runtime"), "py", &mut sources);
    files_under(&root().join("sandbox-images/python/src"), "rs", &mut sources);
    let unlisted: Vec<_> = sources.iter().filter(|s| !listed.contains(*s)).collect();
    assert!(unlisted.is_empty(), "docs/design.md section 10 does not list {unlisted:?}");
    let missing: Vec<_> = listed.iter().filter(|p| !root().join(p).exists()).collect();
    assert!(missing.is_empty(), "docs/design.md section 10 lists what does not exist: {missing:?}");
}

#[test]
fn every_file_a_document_names_exists() {
    for document in ["README.md", "CONTRIBUTING.md", "SECURITY.md", "docs/design.md", "sandbox-images/README.md"] {
        let mut text = read(document);
        if document == "docs/design.md" {
            // Section 10 names files relative to its folder headings: the map test checks them.
            text = text.replace(section(&text.clone(), "10."), "");
        }
        for span in text.lines().flat_map(code_spans) {
            let names_a_source =
                (span.starts_with("src/") || span.starts_with("tests/") || span.starts_with("benches/"))
                    && !span.contains(['*', ' ', '<']);
            if names_a_source {
                assert!(root().join(span).exists(), "{document} names {span}, which does not exist");
            }
        }
    }
}

/// `METHOD /path` of every operation in an OpenAPI document.
fn operations(doc: &Value) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("a path item").keys() {
            found.insert(format!("{} {path}", method.to_uppercase()));
        }
    }
    found
}

async fn call(router: &axum::Router, method: &str, uri: &str) -> (StatusCode, Value) {
    let request = Request::builder().method(method).uri(uri).header("content-type", "application/json");
    let body = if method == "POST" { Body::from("{}") } else { Body::empty() };
    let response = router.clone().oneshot(request.body(body).unwrap()).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test]
async fn the_design_route_table_is_the_router() {
    let router = app(AppState::new(Service::new(common::sandbox(), ServiceConfig::default())));
    let design = read("docs/design.md");
    let mut documented = BTreeSet::new();
    for line in section(&design, "7.").lines().filter(|l| l.starts_with("| `")) {
        let cell = line.split('|').nth(1).unwrap();
        documented.extend(code_spans(cell).into_iter().map(str::to_owned));
    }
    let (_, doc) = call(&router, "GET", "/openapi.json").await;
    let mut served = operations(&doc);
    served.insert("GET /openapi.json".into());
    assert_eq!(documented, served, "docs/design.md section 7 against the OpenAPI document");

    let (_, unknown_route) = call(&router, "GET", "/v1/no-such-route").await;
    for operation in &served {
        let (method, path) = operation.split_once(' ').unwrap();
        let uri = path.replace("{id}", "00000000-0000-4000-8000-000000000000").replace("{name}", "t");
        let (status, body) = call(&router, method, &uri).await;
        assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{operation}");
        assert_ne!(body, unknown_route, "{operation} reaches no handler");
    }
}

#[test]
fn the_abi_document_names_every_import_the_host_defines() {
    let abi = read("src/sandbox/abi.rs");
    let defined: BTreeSet<&str> =
        abi.split("(ABI_MODULE, \"").skip(1).map(|rest| rest.split('"').next().unwrap()).collect();
    assert!(defined.len() >= 4, "found the imports in abi.rs: {defined:?}");
    let readme = read("sandbox-images/README.md");
    let imports = section(&readme, "Contract").split("### Host imports").nth(1).expect("an imports table");
    let imports = imports.split("\n### ").next().unwrap();
    let documented: BTreeSet<&str> =
        imports.lines().filter(|l| l.starts_with("| `")).map(|l| code_spans(l)[0]).collect();
    assert_eq!(documented, defined, "sandbox-images/README.md's host imports against src/sandbox/abi.rs");
}

/// The file a test path of SECURITY.md lives in: `attacks::x` in `tests/attacks.rs`,
/// `area::x` in `tests/integration/area.rs`, `a::b::tests::x` in `src/a/b.rs` or `src/a/b/mod.rs`.
fn test_file(path: &[&str]) -> PathBuf {
    match path {
        ["attacks", _] => root().join("tests/attacks.rs"),
        [area, _] => root().join(format!("tests/integration/{area}.rs")),
        [modules @ .., "tests", _] => {
            let base = root().join("src").join(modules.join("/"));
            let file = base.with_extension("rs");
            if file.exists() { file } else { base.join("mod.rs") }
        }
        _ => panic!("SECURITY.md names a test as {path:?}, which no rule places"),
    }
}

#[test]
fn security_names_tests_that_exist() {
    let security = read("SECURITY.md");
    let mut checked = 0;
    for span in security.lines().flat_map(code_spans).filter(|s| s.contains("::")) {
        let path: Vec<&str> = span.split("::").collect();
        let file = test_file(&path);
        let name = path.last().unwrap().trim_end_matches('*');
        let source = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{span}: {}: {e}", file.display()));
        let found = source.contains(&format!("fn {name}")) || source.contains(&format!("(\"{name}"));
        assert!(found, "SECURITY.md names {span}, but {} has no such test", file.display());
        checked += 1;
    }
    assert!(checked >= 30, "SECURITY.md's table names its tests ({checked} found)");
}
