//! Files in and out of containers through the API: a script reads an uploaded CSV, writes a
//! summary CSV and a JSON, the client downloads both, and after a restart the same container
//! still has them. Files belong to the key that made them.

use crate::server;
use serde_json::{Value, json};

const SCRIPT: &str = r#"
import csv, json, os
totals = {}
with open("sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        totals[row["region"]] = totals.get(row["region"], 0) + int(row["amount"])
with open("summary.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["region", "total"])
    for region, total in sorted(totals.items()):
        writer.writerow([region, total])
os.makedirs("reports", exist_ok=True)
with open("reports/summary.json", "w") as f:
    json.dump(totals, f, sort_keys=True)
with open("/tmp/scratch.txt", "w") as f:
    f.write("scratch files are not returned")
print(len(totals), "regions")
"#;

const SALES: &str = "region,amount\nnorth,10\nsouth,7\nnorth,5\n";

/// A multipart body with one part, `file`, as Anthropic's SDKs send an upload.
fn multipart(filename: &str, bytes: &[u8]) -> (String, Vec<u8>) {
    let boundary = format!("sluice-test-{}", uuid::Uuid::new_v4().simple());
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

struct Api {
    client: reqwest::Client,
    base: String,
}

impl Api {
    async fn send(&self, request: reqwest::RequestBuilder, key: &str) -> (u16, Value) {
        let response = request.header("x-api-key", key).send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({status}): {text}")))
    }

    async fn upload(&self, key: &str, filename: &str, bytes: &[u8]) -> (u16, Value) {
        let (content_type, body) = multipart(filename, bytes);
        let request = self
            .client
            .post(format!("{}/v1/files?beta=true", self.base))
            .header("content-type", content_type)
            .body(body);
        self.send(request, key).await
    }

    async fn get(&self, key: &str, path: &str) -> (u16, Value) {
        self.send(self.client.get(format!("{}{path}", self.base)), key).await
    }

    async fn post(&self, key: &str, path: &str, body: Value) -> (u16, Value) {
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_string());
        self.send(request, key).await
    }

    async fn download(&self, key: &str, id: &str) -> (String, Vec<u8>) {
        let response = self
            .client
            .get(format!("{}/v1/files/{id}/content", self.base))
            .header("x-api-key", key)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "downloading {id}");
        let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
        (content_type, response.bytes().await.unwrap().to_vec())
    }
}

#[tokio::test]
async fn a_script_reads_an_upload_its_outputs_download_and_a_restart_keeps_them() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("files-{}", uuid::Uuid::new_v4()));
    let data = dir.join("data");
    let args = ["--data-dir", data.to_str().unwrap(), "--api-key", "k1,k2", "--max-containers", "4"];
    let first = server::start(&args, &[]);
    let api = Api { client: reqwest::Client::new(), base: first.base.clone() };

    let (status, upload) = api.upload("k1", "sales.csv", SALES.as_bytes()).await;
    assert_eq!(status, 200, "{upload}");
    assert_eq!(
        (&upload["type"], &upload["filename"], &upload["mime_type"], &upload["size_bytes"], &upload["downloadable"]),
        (&json!("file"), &json!("sales.csv"), &json!("text/csv"), &json!(SALES.len()), &json!(true))
    );
    let upload_id = upload["id"].as_str().unwrap().to_owned();

    // Another key can neither see the file nor place it.
    let (status, body) = api.get("k2", &format!("/v1/files/{upload_id}")).await;
    assert_eq!((status, &body["error"]["type"]), (404, &json!("not_found_error")), "{body}");
    let placing = json!({"code": "print(1)", "files": [{"type": "container_upload", "file_id": upload_id}]});
    let (status, body) = api.post("k2", "/v1/executions", placing).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("not found"), "{body}");

    let request = json!({"code": SCRIPT, "files": [{"type": "container_upload", "file_id": upload_id}]});
    let (status, execution) = api.post("k1", "/v1/executions", request).await;
    assert_eq!((status, &execution["status"]), (200, &json!("completed")), "{execution}");
    assert_eq!(execution["result"]["stdout"], "2 regions\n", "{execution}");
    let blocks = execution["result"]["content"].as_array().unwrap().clone();
    assert_eq!(blocks.len(), 2, "the two outputs, not the upload or /tmp: {execution}");
    assert_eq!(execution["code_execution_tool_result"]["content"]["content"], json!(blocks));
    let container = execution["container"]["id"].as_str().unwrap().to_owned();

    let expected = [
        ("summary.csv", "text/csv", "region,total\r\nnorth,15\r\nsouth,7\r\n"),
        ("reports/summary.json", "application/json", r#"{"north": 15, "south": 7}"#),
    ];
    let mut output_ids = Vec::new();
    for block in &blocks {
        assert_eq!(block["type"], "code_execution_output");
        let id = block["file_id"].as_str().unwrap();
        let (status, meta) = api.get("k1", &format!("/v1/files/{id}")).await;
        assert_eq!(status, 200, "{meta}");
        let (name, mime, text) = expected
            .iter()
            .find(|(name, ..)| meta["filename"] == *name)
            .unwrap_or_else(|| panic!("unexpected output {meta}"));
        assert_eq!((&meta["mime_type"], &meta["source"]), (&json!(mime), &json!("output")), "{meta}");
        let (content_type, bytes) = api.download("k1", id).await;
        assert_eq!((content_type.as_str(), String::from_utf8(bytes).unwrap().as_str()), (*mime, *text), "{name}");
        output_ids.push((*name, id.to_owned()));
    }

    // Listing: newest first, in pages.
    let (_, page) = api.get("k1", "/v1/files?limit=2").await;
    assert_eq!((page["data"].as_array().unwrap().len(), &page["has_more"]), (2, &json!(true)), "{page}");
    let (_, rest) = api.get("k1", &format!("/v1/files?limit=2&after_id={}", page["last_id"].as_str().unwrap())).await;
    assert_eq!((rest["data"].as_array().unwrap().len(), &rest["has_more"]), (1, &json!(false)), "{rest}");
    assert_eq!(rest["data"][0]["id"], upload_id.as_str(), "the upload is the oldest: {rest}");
    let (_, theirs) = api.get("k2", "/v1/files").await;
    assert_eq!(theirs["data"], json!([]), "{theirs}");

    first.stop();
    let second = server::start(&args, &[]);
    let api = Api { client: reqwest::Client::new(), base: second.base.clone() };
    let check = "import os, json\nprint(sorted(os.listdir('.')), sorted(os.listdir('reports')))\n\
                 print(open('summary.csv').read().split())\nprint(json.load(open('reports/summary.json')))";
    let (status, after) = api.post("k1", "/v1/executions", json!({"code": check, "container": container})).await;
    assert_eq!(status, 200, "{after}");
    assert_eq!(
        after["result"]["stdout"],
        "['reports', 'sales.csv', 'summary.csv'] ['summary.json']\n['region,total', 'north,15', 'south,7']\n\
         {'north': 15, 'south': 7}\n",
        "{after}"
    );
    assert_eq!(after["result"]["content"], json!([]), "nothing changed: {after}");
    for (_, id) in &output_ids {
        assert!(!api.download("k1", id).await.1.is_empty());
    }

    // The first execution replays identically: its upload is placed again from the store.
    let (status, replay) =
        api.post("k1", &format!("/v1/executions/{}/replay", execution["id"].as_str().unwrap()), json!({})).await;
    assert_eq!((status, &replay["result"]), (200, &json!("identical")), "{replay}");

    // Deleting the upload leaves the container's copy.
    let (status, deleted) = api.send(api.client.delete(format!("{}/v1/files/{upload_id}", api.base)), "k1").await;
    assert_eq!((status, deleted), (200, json!({"id": upload_id, "type": "file_deleted"})));
    assert_eq!(api.get("k1", &format!("/v1/files/{upload_id}")).await.0, 404);
    let same = format!("print(open('sales.csv').read() == {SALES:?})");
    let (_, kept) = api.post("k1", "/v1/executions", json!({"code": same, "container": container})).await;
    assert_eq!(kept["result"]["stdout"], "True\n", "{kept}");

    // An output is placed into a new container where it was written, directory and all.
    let (_, json_id) = output_ids.iter().find(|(name, _)| *name == "reports/summary.json").unwrap();
    let placing = json!({"code": "print(open('reports/summary.json').read())",
                         "files": [{"type": "container_upload", "file_id": json_id}]});
    let (_, placed) = api.post("k1", "/v1/executions", placing).await;
    assert_eq!(placed["result"]["stdout"], "{\"north\": 15, \"south\": 7}\n", "{placed}");
}

/// A file can come with tool results, as a user turn carries `container_upload` blocks beside
/// `tool_result`s: it is in place when the script resumes, and replay places it again.
#[tokio::test]
async fn a_file_given_with_tool_results_is_there_when_the_script_resumes() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("files-{}", uuid::Uuid::new_v4()));
    let args = ["--data-dir", dir.to_str().unwrap(), "--api-key", "k1", "--max-containers", "2"];
    let server = server::start(&args, &[]);
    let api = Api { client: reqwest::Client::new(), base: server.base.clone() };
    let tool =
        json!({"name": "ask", "input_schema": {"type": "object"}, "allowed_callers": ["code_execution_20260120"]});
    let code = "import os\nbefore = os.listdir('.')\nanswer = await ask({})\nprint(before, answer, open('late.csv').read().split())";
    let (_, paused) = api.post("k1", "/v1/executions", json!({"code": code, "tools": [tool]})).await;
    assert_eq!(paused["status"], "requires_action", "{paused}");
    let (_, late) = api.upload("k1", "late.csv", b"a,b\n1,2\n").await;
    let results = json!({
        "tool_results": [{"type": "tool_result", "tool_use_id": paused["tool_uses"][0]["id"], "content": "yes"}],
        "files": [{"type": "container_upload", "file_id": late["id"]}],
    });
    let path = format!("/v1/executions/{}/tool_results", paused["id"].as_str().unwrap());
    let (status, done) = api.post("k1", &path, results).await;
    assert_eq!((status, &done["status"]), (200, &json!("completed")), "{done}");
    assert_eq!(done["result"]["stdout"], "[] yes ['a,b', '1,2']\n", "{done}");
    let (_, replay) =
        api.post("k1", &format!("/v1/executions/{}/replay", paused["id"].as_str().unwrap()), json!({})).await;
    assert_eq!(replay["result"], "identical", "{replay}");

    // A loop nested in a function waits inside the host (`wait`): the file arrives there too.
    let nested = "import asyncio, os\ndef helper():\n    return asyncio.run(ask({}))\nanswer = helper()\n\
                  print(answer, sorted(os.listdir('.')))";
    let container = &paused["container"]["id"];
    let (_, paused) =
        api.post("k1", "/v1/executions", json!({"code": nested, "tools": [tool], "container": container})).await;
    assert_eq!(paused["status"], "requires_action", "{paused}");
    let (_, later) = api.upload("k1", "later.txt", b"x").await;
    let results = json!({
        "tool_results": [{"type": "tool_result", "tool_use_id": paused["tool_uses"][0]["id"], "content": "ok"}],
        "files": [{"type": "container_upload", "file_id": later["id"]}],
    });
    let (_, done) =
        api.post("k1", &format!("/v1/executions/{}/tool_results", paused["id"].as_str().unwrap()), results).await;
    assert_eq!(done["result"]["stdout"], "ok ['late.csv', 'later.txt']\n", "{done}");
}

#[tokio::test]
async fn bad_uploads_get_typed_errors() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("files-{}", uuid::Uuid::new_v4()));
    let args = ["--data-dir", dir.to_str().unwrap(), "--api-key", "k1", "--max-containers", "2"];
    let server = server::start(&args, &[]);
    let api = Api { client: reqwest::Client::new(), base: server.base.clone() };

    for name in ["../escape.txt", "a/b.csv", ".."] {
        let (status, body) = api.upload("k1", name, b"x").await;
        assert_eq!((status, &body["error"]["type"]), (400, &json!("invalid_request_error")), "{name}: {body}");
    }
    let request =
        api.client.post(format!("{}/v1/files", api.base)).header("content-type", "multipart/form-data; boundary=x");
    let (status, body) = api
        .send(request.body("--x\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nv\r\n--x--\r\n"), "k1")
        .await;
    assert_eq!(status, 400, "no `file` part: {body}");
    let (status, body) = api.get("k1", "/v1/files/file_unknown").await;
    assert_eq!((status, &body["error"]["type"]), (404, &json!("not_found_error")), "{body}");
    let (status, body) = api.get("k1", "/v1/files?limit=0").await;
    assert_eq!(status, 400, "{body}");

    // Two files with one name, a missing file, a storage limit smaller than the file.
    let (_, a) = api.upload("k1", "same.txt", b"one").await;
    let (_, b) = api.upload("k1", "same.txt", b"two").await;
    let block = |v: &Value| json!({"type": "container_upload", "file_id": v["id"]});
    let (status, body) = api.post("k1", "/v1/executions", json!({"code": "1", "files": [block(&a), block(&b)]})).await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = api
        .post("k1", "/v1/executions", json!({"code": "1", "files": [block(&a)], "limits": {"storage_bytes": 2}}))
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) =
        api.post("k1", "/v1/executions", json!({"code": "1", "files": [{"type": "container_upload"}]})).await;
    assert_eq!(status, 400, "a block without file_id: {body}");

    // The contract's other shapes: an id alone in `files`, a block in `content`.
    let read = "print(open('same.txt').read())";
    let (_, body) = api.post("k1", "/v1/executions", json!({"code": read, "files": [a["id"]]})).await;
    assert_eq!(body["result"]["stdout"], "one\n", "{body}");
    let (_, body) = api.post("k1", "/v1/executions", json!({"code": read, "content": [block(&b)]})).await;
    assert_eq!(body["result"]["stdout"], "two\n", "{body}");
    let (status, body) =
        api.post("k1", "/v1/executions", json!({"code": read, "content": [{"type": "image", "file_id": "x"}]})).await;
    assert_eq!(status, 400, "{body}");

    // A script that fills its storage gets ENOSPC, and the container keeps serving.
    let filling = "import errno\ntry:\n    open('big', 'wb').write(b'x' * 2000)\nexcept OSError as e:\n    print(e.errno == errno.ENOSPC)";
    let (_, body) = api.post("k1", "/v1/executions", json!({"code": filling, "limits": {"storage_bytes": 1000}})).await;
    assert_eq!(body["result"]["stdout"], "True\n", "{body}");
}
