//! Shared by the integration tests: one sandbox per test process (building the base image,
//! once per machine, takes seconds; mapping it afterwards about a millisecond).

#![allow(dead_code)]

use sluice::ServerKey;
use sluice::{Sandbox, SandboxConfig};
use std::sync::OnceLock;

/// Whether a test's subject (a database, an interpreter, a kernel feature) is here. Where it
/// is not, the test says so on stderr and is skipped, unless `SLUICE_TEST_REQUIRE_ALL` is set
/// (CI sets it, and provides every subject): then a missing subject fails the test.
pub fn subject_present(subject: &str, present: bool) -> bool {
    if !present {
        assert!(
            std::env::var_os("SLUICE_TEST_REQUIRE_ALL").is_none(),
            "{subject} is missing, and SLUICE_TEST_REQUIRE_ALL says every subject must be here"
        );
        eprintln!("SKIPPED: {subject} is missing here (CI provides it)");
    }
    present
}

/// The Python test env (`tests/python/setup.sh`), or `None` after [`subject_present`] said
/// the test skips.
pub fn python_parts() -> Option<crate::python_env::PythonParts> {
    let found = crate::python_env::PythonParts::find();
    subject_present("the Python test env (run tests/python/setup.sh)", found.is_some()).then_some(found?)
}

/// The server key every store of the tests is sealed with (a store reopened needs the same).
pub fn server_key() -> ServerKey {
    ServerKey::new(b"the key every test store shares".to_vec()).expect("long enough")
}

/// The sandbox every test of this process shares. Its runtime lives as long as the process
/// (on a thread of its own), so the ready pool keeps refilling in the background as it does
/// in production, and tests take containers from it.
pub fn sandbox() -> Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX
        .get_or_init(|| {
            let (started, sandbox) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name("test-sandbox-runtime".into())
                .spawn(move || {
                    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
                    runtime.block_on(async move {
                        let _ = started.send(Sandbox::new(SandboxConfig::default()).await);
                        std::future::pending::<()>().await
                    })
                })
                .expect("a thread for the sandbox's runtime");
            sandbox.recv().expect("the sandbox thread answers").expect("the sandbox starts")
        })
        .clone()
}
