//! Where the audit store is and the server key that seals it: `StoreArgs`, shared by commands.

use crate::audit::Store;
use crate::keys::ServerKey;
use std::path::{Path, PathBuf};

/// Where the audit store is (SQLite in the data directory unless a URL says otherwise), and
/// the server key that seals it.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct StoreArgs {
    /// Directory for the embedded store and the server key (created private, 0700).
    #[arg(long, env = "SLUICE_DATA_DIR", default_value = "./sluice-data")]
    pub data_dir: PathBuf,
    /// Store URL (sqlite:// or postgres://); default: SQLite in the data directory.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: Option<String>,
    /// Secret (at least 16 bytes) that seals snapshots and the audit chain; nodes sharing a
    /// store must share it. Default: a key created once in the data directory.
    #[arg(long, alias = "snapshot-key", env = "SLUICE_SERVER_KEY", hide_env_values = true)]
    pub server_key: Option<String>,
}

/// The environment variable that named the key before it also sealed the audit chain.
const LEGACY_KEY_ENV: &str = "SLUICE_SNAPSHOT_KEY";

impl StoreArgs {
    /// The server key: given, or kept in the data directory (created there when `create`).
    pub(super) fn key(&self, create: bool) -> Result<ServerKey, String> {
        let given = self.server_key.clone().or_else(|| std::env::var(LEGACY_KEY_ENV).ok());
        if let Some(secret) = given {
            return ServerKey::new(secret.into_bytes()).map_err(|e| format!("--server-key: {e}"));
        }
        if create {
            return ServerKey::load_or_create(&self.data_dir);
        }
        ServerKey::load(&self.data_dir)?.ok_or_else(|| {
            format!(
                "no server key: give --server-key, or the --data-dir the server used ({} has none)",
                self.data_dir.display()
            )
        })
    }

    /// Opens the store; `create` makes the data directory (private) and the key if missing.
    pub(super) async fn open(&self, create: bool) -> Result<(Store, ServerKey), String> {
        let url = match &self.database_url {
            Some(url) => {
                if create && self.server_key.is_none() {
                    prepare_private_dir(&self.data_dir)?;
                }
                url.clone()
            }
            None if create || self.data_dir.exists() => {
                Store::prepare_data_dir(&self.data_dir).map_err(|e| e.to_string())?
            }
            None => return Err(format!("no data directory {}", self.data_dir.display())),
        };
        let key = self.key(create)?;
        let store = Store::open(&url, &key).await.map_err(|e| e.to_string())?;
        Ok((store, key))
    }
}

/// Creates `dir` private to this user (0700), or makes it so.
fn prepare_private_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .and_then(|()| std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)))
        .map_err(|e| format!("cannot prepare data directory {}: {e}", dir.display()))
}
