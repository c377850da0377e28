//! The audit store: sqlx over SQLite or PostgreSQL, one set of queries for both.
//!
//! This file opens the store (connections, embedded migrations, the server key's claim);
//! `records` appends to the chains and reads, lists, verifies and prunes them; `containers`
//! keeps containers' snapshots, leases between nodes and chain heads.

mod containers;
mod files;
mod records;

pub use records::ExecutionFilter;

pub use containers::StoredContainer;
pub use files::{FileRow, NewFile};
pub(crate) use records::{ExecutionRow, MAX_LIST_ROWS};

use sqlx::any::AnyPoolOptions;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::{AnyPool, Executor, Row};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::SystemTime;

const SQLITE_MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "audit", include_str!("../../../migrations/sqlite/0001_audit.sql")),
    (2, "containers", include_str!("../../../migrations/sqlite/0002_containers.sql")),
    (3, "hardening", include_str!("../../../migrations/sqlite/0003_hardening.sql")),
    (4, "approvals", include_str!("../../../migrations/sqlite/0004_approvals.sql")),
    (5, "listing", include_str!("../../../migrations/sqlite/0005_listing.sql")),
    (6, "files", include_str!("../../../migrations/sqlite/0006_files.sql")),
];
const POSTGRES_MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "audit", include_str!("../../../migrations/postgres/0001_audit.sql")),
    (2, "containers", include_str!("../../../migrations/postgres/0002_containers.sql")),
    (3, "hardening", include_str!("../../../migrations/postgres/0003_hardening.sql")),
    (4, "approvals", include_str!("../../../migrations/postgres/0004_approvals.sql")),
    (5, "listing", include_str!("../../../migrations/postgres/0005_listing.sql")),
    (6, "files", include_str!("../../../migrations/postgres/0006_files.sql")),
];
const SQLITE_CONNECTIONS: u32 = 4;
const POSTGRES_CONNECTIONS: u32 = 8;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migrating the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("unsupported database URL {0:?} (use sqlite:// or postgres://)")]
    UnsupportedUrl(String),
    #[error("stored record is unreadable: {0}")]
    Corrupt(String),
    #[error(
        "this store's snapshots and audit chain were sealed with another server key (fingerprint \
         {stored}, this node's {given}): start every node with the same key"
    )]
    ForeignKey { stored: String, given: String },
    #[error("cannot prepare the data directory {0}: {1}")]
    DataDir(std::path::PathBuf, std::io::Error),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Sqlite,
    Postgres,
}

/// Migrations embedded in the binary, applied at open.
#[derive(Debug)]
struct Embedded(&'static [(i64, &'static str, &'static str)]);

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(self) -> futures_util::future::BoxFuture<'s, Result<Vec<Migration>, sqlx::error::BoxDynError>> {
        let migrations = self
            .0
            .iter()
            .map(|(version, description, sql)| {
                Migration::new(*version, (*description).into(), MigrationType::Simple, (*sql).into(), false)
            })
            .collect();
        Box::pin(async move { Ok(migrations) })
    }
}

/// The audit store.
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    heads: Mutex<HashMap<String, (i64, String)>>,
    /// Seals the chain's records (derived from the server key; never stored).
    chain_key: Vec<u8>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("backend", &self.backend).finish_non_exhaustive()
    }
}

fn now_ms() -> i64 {
    super::unix_ms(SystemTime::now()) as i64
}

impl Store {
    /// The default store: SQLite in `data_dir/sluice.db`.
    pub fn sqlite_url(data_dir: &Path) -> String {
        format!("sqlite://{}?mode=rwc", data_dir.join("sluice.db").display())
    }

    /// Makes `data_dir` private to this user (0700) and the SQLite database in it (0600)
    /// before anything is written there; returns the database's URL.
    pub fn prepare_data_dir(data_dir: &Path) -> Result<String, StoreError> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
        let fail = |e| StoreError::DataDir(data_dir.to_owned(), e);
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(data_dir).map_err(fail)?;
        std::fs::set_permissions(data_dir, std::fs::Permissions::from_mode(0o700)).map_err(fail)?;
        let database = data_dir.join("sluice.db");
        std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(&database).map_err(fail)?;
        for file in ["sluice.db", "sluice.db-wal", "sluice.db-shm"] {
            let path = data_dir.join(file);
            if path.exists() {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(fail)?;
            }
        }
        Ok(Self::sqlite_url(data_dir))
    }

    /// Opens (creating if needed) the store and applies its migrations; `key` seals and
    /// checks the audit chain.
    pub async fn open(url: &str, key: &crate::keys::ServerKey) -> Result<Self, StoreError> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            return Err(StoreError::UnsupportedUrl(url.to_owned()));
        };
        let options = AnyPoolOptions::new();
        let pool = match backend {
            Backend::Sqlite => {
                options
                    .max_connections(SQLITE_CONNECTIONS)
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            // WAL: readers never block the writer. NORMAL: a commit is in the
                            // WAL before it returns, so a crash of this process loses nothing.
                            conn.execute(
                                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 10000;",
                            )
                            .await?;
                            Ok(())
                        })
                    })
                    .connect(url)
                    .await?
            }
            Backend::Postgres => options.max_connections(POSTGRES_CONNECTIONS).connect(url).await?,
        };
        let migrations = match backend {
            Backend::Sqlite => Embedded(SQLITE_MIGRATIONS),
            Backend::Postgres => Embedded(POSTGRES_MIGRATIONS),
        };
        Migrator::new(migrations).await?.run(&pool).await?;
        Ok(Self { pool, backend, heads: Mutex::default(), chain_key: key.chain_key() })
    }

    /// Records the fingerprint of the server key the first time, and refuses another key
    /// after that: a node with the wrong key must not start.
    pub async fn claim_key(&self, key: &crate::keys::ServerKey) -> Result<(), StoreError> {
        let given = key.fingerprint();
        sqlx::query("INSERT INTO server_keys (purpose, fingerprint) VALUES ($1, $2) ON CONFLICT (purpose) DO NOTHING")
            .bind("server")
            .bind(&given)
            .execute(&self.pool)
            .await?;
        let stored: String = sqlx::query("SELECT fingerprint FROM server_keys WHERE purpose = $1")
            .bind("server")
            .fetch_one(&self.pool)
            .await?
            .try_get("fingerprint")?;
        if stored != given {
            return Err(StoreError::ForeignKey { stored, given });
        }
        Ok(())
    }

    /// The key that seals this store's chain (for checking bundles it exported).
    pub fn chain_key(&self) -> &[u8] {
        &self.chain_key
    }

    /// A write transaction. SQLite's must take the write lock at BEGIN: a deferred one that
    /// reads first cannot wait for another writer, it fails at once with "database is locked".
    async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>, StoreError> {
        Ok(match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.pool.begin().await?,
        })
    }

    pub fn is_postgres(&self) -> bool {
        self.backend == Backend::Postgres
    }
}

#[cfg(test)]
mod tests {
    use super::{POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS};
    use std::path::Path;

    /// A file added to `migrations/` but not to the lists above would never be applied, and one
    /// listed under another file's number or name would be applied as that one.
    #[test]
    fn every_migration_file_is_embedded_and_nothing_else() {
        for (dir, embedded) in [("sqlite", SQLITE_MIGRATIONS), ("postgres", POSTGRES_MIGRATIONS)] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations").join(dir);
            let mut files: Vec<(i64, String, String)> = std::fs::read_dir(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .map(|entry| {
                    let name = entry.unwrap().file_name().into_string().unwrap();
                    let parsed = name.strip_suffix(".sql").and_then(|stem| stem.split_once('_'));
                    let Some((version, description)) = parsed else {
                        panic!("migrations/{dir}/{name}: not named NNNN_description.sql")
                    };
                    let version = version.parse().unwrap_or_else(|_| panic!("migrations/{dir}/{name}: bad number"));
                    (version, description.to_owned(), std::fs::read_to_string(path.join(&name)).unwrap())
                })
                .collect();
            files.sort();
            let mut listed: Vec<(i64, String, String)> =
                embedded.iter().map(|&(version, description, sql)| (version, description.into(), sql.into())).collect();
            listed.sort();
            let names =
                |list: &[(i64, String, String)]| list.iter().map(|(v, d, _)| format!("{v:04}_{d}")).collect::<Vec<_>>();
            assert_eq!(names(&files), names(&listed), "migrations/{dir} (left) against {dir}'s embedded list (right)");
            for ((version, description, sql), (_, _, embedded_sql)) in files.iter().zip(&listed) {
                assert!(sql == embedded_sql, "{dir} migration {version:04}_{description} embeds another file");
            }
        }
    }
}
