//! `sluice serve` as a child process for the tests that kill and restart it, with small
//! JSON-over-HTTP helpers.

#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running server; dropping it kills it with SIGKILL (no graceful shutdown).
pub struct Server {
    pub child: Child,
    pub base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Stops it with SIGTERM and waits: the graceful path.
    pub fn stop(mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }
}

/// Starts `sluice serve --listen 127.0.0.1:0 <args>` and waits until it logs its address.
pub fn start(args: &[&str], env: &[(&str, &str)]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .envs(env.iter().copied())
        .env("SLUICE_LOG", "info")
        .env_remove("DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sluice serve starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if std::env::var_os("SLUICE_TEST_SERVER_LOGS").is_some() {
                eprintln!("[server] {line}");
            }
            if !sent && let Some(rest) = line.split("listen=").nth(1) {
                let _ = tx.send(rest.split_whitespace().next().unwrap().to_owned());
                sent = true;
            }
        }
    });
    let address = rx.recv_timeout(Duration::from_secs(120)).expect("the server logs its address");
    Server { child, base: format!("http://{address}") }
}

pub async fn post(client: &reqwest::Client, url: String, body: Value) -> Value {
    let response =
        client.post(url).header("content-type", "application/json").body(body.to_string()).send().await.unwrap();
    let text = response.text().await.unwrap();
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

pub async fn get(client: &reqwest::Client, url: String) -> Value {
    let text = client.get(url).send().await.unwrap().text().await.unwrap();
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}
