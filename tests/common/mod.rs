//! Shared by the integration tests: one sandbox per test process (building the base image,
//! once per machine, takes seconds; mapping it afterwards about a millisecond).

#![allow(dead_code)]

use sluice::{Sandbox, SandboxConfig};
use std::sync::OnceLock;

pub fn sandbox() -> Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX
        .get_or_init(|| {
            std::thread::spawn(|| {
                let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
                runtime.block_on(Sandbox::new(SandboxConfig::default())).expect("the sandbox starts")
            })
            .join()
            .expect("the sandbox thread finishes")
        })
        .clone()
}
