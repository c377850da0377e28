//! `sluice run` as a user runs it: the real binary, files on disk, exit codes.

use std::path::PathBuf;
use std::process::{Command, Output};

struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self { dir }
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }
}

fn sluice(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sluice")).args(args).output().expect("sluice runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn run_prints_output_and_exits_with_the_return_code() {
    let s = Scratch::new("ok");
    let ok = sluice(&["run", &s.file("ok.py", "import sys\nprint('out')\nprint('err', file=sys.stderr)\n")]);
    assert_eq!((ok.status.code(), text(&ok.stdout), text(&ok.stderr)), (Some(0), "out\n".into(), "err\n".into()));

    let failing = sluice(&["run", &s.file("fail.py", "print('before')\n{}['k']\n")]);
    assert_eq!(failing.status.code(), Some(1));
    assert_eq!(text(&failing.stdout), "before\n");
    assert!(text(&failing.stderr).contains("KeyError: 'k'"), "{}", text(&failing.stderr));
}

/// `--file` puts files in, `--out` takes what the script wrote, and never leaves its directory:
/// not through a link already there, not by replacing a file.
#[test]
fn run_takes_files_in_and_writes_outputs_only_inside_out() {
    let s = Scratch::new("files");
    let input = s.file("sales.csv", "region,amount\nnorth,10\nsouth,7\n");
    let script = s.file(
        "sum.py",
        "import os\nrows = open('sales.csv').read().splitlines()[1:]\nos.makedirs('deep/er', exist_ok=True)\n\
         open('deep/er/count.txt', 'w').write(str(len(rows)))\nopen('/tmp/scratch', 'w').write('not returned')\n",
    );
    let out = s.dir.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let ran = sluice(&["run", &script, "--file", &input, "--out", out.to_str().unwrap()]);
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran.stderr));
    assert_eq!(std::fs::read_to_string(out.join("deep/er/count.txt")).unwrap(), "2");
    assert!(!out.join("sales.csv").exists() && !out.join("tmp").exists(), "inputs and /tmp are not outputs");

    // Again into the same directory: the file there is not replaced.
    let again = sluice(&["run", &script, "--file", &input, "--out", out.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    assert!(text(&again.stderr).contains("count.txt"), "{}", text(&again.stderr));

    // A link inside --out that points elsewhere is not followed.
    let elsewhere = s.dir.join("elsewhere");
    let _ = std::fs::remove_dir_all(&elsewhere);
    std::fs::create_dir_all(&elsewhere).unwrap();
    let linked = s.dir.join("linked");
    let _ = std::fs::remove_dir_all(&linked);
    std::fs::create_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink(&elsewhere, linked.join("deep")).unwrap();
    let refused = sluice(&["run", &script, "--file", &input, "--out", linked.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "nothing was written through the link");
}

#[test]
fn run_answers_tools_from_a_file_in_call_order() {
    let s = Scratch::new("answers");
    let script = s.file(
        "audit.py",
        "import asyncio, json\nasync def main():\n    team = json.loads(await get_team_members({'department': 'eng'}))\n    \
         results = await asyncio.gather(*[get_expenses({'employee_id': m['id']}) for m in team])\n    \
         print([sum(e['amount'] for e in json.loads(r)) for r in results])\nasyncio.run(main())\n",
    );
    let answers = s.file(
        "answers.json",
        r#"{"get_team_members": "[{\"id\": \"a\"}, {\"id\": \"b\"}]", "get_expenses": [[{"amount": 1}, {"amount": 2}], [{"amount": 5}]]}"#,
    );
    let out = sluice(&["run", &script, "--answers", &answers]);
    assert_eq!(text(&out.stdout), "[3, 5]\n", "{}", text(&out.stderr));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn run_respects_tool_definitions_and_refuses_direct_only_tools() {
    let s = Scratch::new("tools");
    let tools = s.file("tools.json", r#"{"tools": [{"name": "send_email", "allowed_callers": ["direct"]}]}"#);
    let answers = s.file("answers.json", r#"{"send_email": "sent"}"#);
    let script = s.file(
        "send.py",
        "import sluice\ntry:\n    await send_email({})\nexcept sluice.ToolNotAllowedError as e:\n    print(e.code)\n",
    );
    let out = sluice(&["run", &script, "--tools", &tools, "--answers", &answers]);
    assert_eq!(text(&out.stdout), "not_allowed\n", "{}", text(&out.stderr));
}

#[test]
fn run_exits_3_naming_the_limit_and_keeps_earlier_output() {
    let s = Scratch::new("limit");
    let out =
        sluice(&["run", &s.file("spin.py", "print('started')\nwhile True:\n    pass\n"), "--limit", "time_ms=200"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(text(&out.stdout), "started\n");
    assert!(text(&out.stderr).contains("execution_time_exceeded"), "{}", text(&out.stderr));
}

#[test]
fn run_reports_bad_input_with_exit_2() {
    let s = Scratch::new("bad");
    let script = s.file("x.py", "print(1)\n");
    for args in [
        vec!["run", "/definitely/missing.py"],
        vec!["run", script.as_str(), "--limit", "cpu=1"],
        vec!["run", script.as_str(), "--limit", "time_ms=999999999"],
        vec!["run", script.as_str(), "--answers", script.as_str()],
    ] {
        let out = sluice(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).starts_with("sluice: "), "{args:?}: {}", text(&out.stderr));
    }
}

#[test]
fn malformed_key_value_flags_are_usage_errors_from_clap() {
    for args in [
        vec!["run", "x.py", "--limit", "time_ms"],
        vec!["run", "x.py", "--limit", "time_ms=soon"],
        vec!["serve", "--max-limit", "memory_bytes=-1", "--listen", "127.0.0.1:0"],
        vec!["serve", "--quota", "containers", "--listen", "127.0.0.1:0"],
    ] {
        let out = sluice(&args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: invalid value ") && stderr.contains("=VALUE>'"), "{args:?}: {stderr}");
    }
}

/// Records executions through the library into a SQLite data directory, for the CLI to read:
/// the container of two, the second's id, and the id of one whose call was denied.
fn record_history(data_dir: &std::path::Path) -> (String, String, String) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        use sluice::NewExecution;
        let url = sluice::Store::prepare_data_dir(data_dir).unwrap();
        let key = sluice::ServerKey::load_or_create(data_dir).unwrap();
        let store = sluice::Store::open(&url, &key).await.unwrap();
        let sandbox = sluice::Sandbox::new(sluice::SandboxConfig::default()).await.unwrap();
        let service =
            sluice::Service::with_store(sandbox, sluice::ServiceConfig::default(), std::sync::Arc::new(store));
        let owner = "cli".to_owned();
        let first = service
            .create_execution(&owner, NewExecution { code: "x = 20".into(), ..Default::default() })
            .await
            .unwrap();
        let request =
            NewExecution { code: "print(x * 2 + 2)".into(), container: Some(first.container_id), ..Default::default() };
        let second = service.create_execution(&owner, request).await.unwrap();
        let mut send = sluice::ToolDefinition::code_callable("send");
        send.requires_approval = Some(true);
        let code = "import sluice\ntry:\n    await send({})\nexcept sluice.ToolDeniedError:\n    print('no')";
        let request = NewExecution { code: code.into(), tools: vec![send], ..Default::default() };
        let held = service.create_execution(&owner, request).await.unwrap();
        let deny = sluice::ApprovalAnswer { id: held.approval_requests[0].id.clone(), approve: false, reason: None };
        let denied = service.decide_approvals(&owner, &held.id, vec![deny], None).await.unwrap();
        assert_eq!(denied.outcome.unwrap().stdout, "no\n");
        (first.container_id.to_string(), second.id, held.id)
    })
}

#[test]
fn audit_verify_export_and_replay_from_the_store_and_a_bundle() {
    let s = Scratch::new("audit");
    let data_dir = s.dir.join("data");
    let (container, execution, denied) = record_history(&data_dir);
    let data = data_dir.to_str().unwrap();
    let verify = sluice(&["audit", "verify", "--data-dir", data]);
    assert_eq!(verify.status.code(), Some(0), "{}", text(&verify.stdout));
    let listed = |approval: &str| text(&sluice(&["audit", "list", "--approval", approval, "--data-dir", data]).stdout);
    let rows: Vec<serde_json::Value> = listed("denied").lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["id"], denied.as_str());
    assert_eq!(listed("approved"), "", "nothing was approved");
    assert_eq!(sluice(&["audit", "list", "--approval", "maybe", "--data-dir", data]).status.code(), Some(2));
    let replayed = sluice(&["replay", &execution, "--data-dir", data]);
    assert_eq!(replayed.status.code(), Some(0), "{}{}", text(&replayed.stdout), text(&replayed.stderr));
    assert!(text(&replayed.stdout).starts_with("identical"));

    let bundle = s.dir.join("history.jsonl");
    let export = sluice(&["audit", "export", &container, "--data-dir", data, "--output", bundle.to_str().unwrap()]);
    assert_eq!(export.status.code(), Some(0), "{}", text(&export.stderr));
    let offline = sluice(&["replay", "--bundle", bundle.to_str().unwrap(), "--data-dir", data]);
    assert_eq!(offline.status.code(), Some(0), "{}", text(&offline.stdout));

    let tampered = std::fs::read_to_string(&bundle).unwrap().replace("x * 2 + 2", "x * 2 + 3");
    let tampered_path = s.file("tampered.jsonl", &tampered);
    let diverged = sluice(&["replay", "--bundle", &tampered_path, "--data-dir", data]);
    assert_eq!(diverged.status.code(), Some(1));
    let report = text(&diverged.stdout);
    assert!(
        report.contains("chain broken") && report.contains("diverged: ") && report.contains("stdout differs"),
        "{report}"
    );
}

#[test]
fn serve_starts_answers_and_stops_gracefully() {
    use std::io::{BufRead, BufReader};
    let s = Scratch::new("serve");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir", s.dir.join("data").to_str().unwrap()])
        .env("SLUICE_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let address = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| line.split("listen=").nth(1).map(|rest| rest.split_whitespace().next().unwrap().to_owned()))
        .expect("the service logs its address");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let health = runtime
        .block_on(async { reqwest::get(format!("http://{address}/healthz")).await.unwrap().text().await.unwrap() });
    assert!(health.contains("\"ok\""), "{health}");
    assert!(s.dir.join("data/sluice.db").exists(), "the SQLite store is created on first start");
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn image_build_makes_the_image_a_later_run_maps() {
    let s = Scratch::new("image");
    let cache = s.dir.join("cache");
    let cache_arg = cache.display().to_string();
    let built = sluice(&["image", "build", "--cache-dir", &cache_arg]);
    assert_eq!(built.status.code(), Some(0), "{}", text(&built.stderr));
    let report = text(&built.stdout);
    let image = report.lines().find_map(|line| line.strip_prefix("image   ")).expect("names the image").to_owned();
    assert!(image.starts_with(&cache_arg) && image.ends_with(".cwasm"), "{report}");
    assert!(std::fs::metadata(&image).unwrap().len() > 1 << 20, "a compiled image is megabytes");
    let guest = report.lines().find_map(|line| line.strip_prefix("guest   ")).expect("names the guest");
    assert!(guest.len() > 64 && guest.ends_with(')'), "sha256 and origin: {guest}");

    // The image compiled from the functions pre-initialization compiled runs Python, and a
    // second build finds it rather than making another.
    let script = s.file("sum.py", "print(sum(range(10)))\n");
    let out = sluice(&["run", &script, "--cache-dir", &cache_arg]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), "45\n".into()), "{}", text(&out.stderr));
    // A rebuilt image would be a new file renamed over the old one: the inode tells.
    use std::os::unix::fs::MetadataExt;
    let inode = std::fs::metadata(&image).unwrap().ino();
    let again = sluice(&["image", "build", "--cache-dir", &cache_arg]);
    assert!(text(&again.stdout).contains(&format!("image   {image}")), "{}", text(&again.stdout));
    assert_eq!(std::fs::metadata(&image).unwrap().ino(), inode, "the image was made again");
    let images =
        std::fs::read_dir(&cache).unwrap().filter(|e| e.as_ref().unwrap().path().extension() == Some("cwasm".as_ref()));
    assert_eq!(images.count(), 1);
}
