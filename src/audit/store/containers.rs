//! Containers in the store: their index row, their latest snapshots, leases between nodes, chain
//! heads, and the executions left unfinished in one.

use super::{Store, StoreError, now_ms};
use sqlx::Row;

/// A container's row in the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerRow {
    pub owner: String,
    pub created_at: i64,
    /// When it was deleted or expired, and which.
    pub closed_at: Option<i64>,
    pub closed_reason: Option<String>,
}

/// A container kept in the store: its latest snapshot (which seals the owner and the waiting
/// execution itself) and what the store needs to find and expire it.
#[derive(Debug, Clone)]
pub struct StoredContainer {
    pub container_id: String,
    pub owner: String,
    pub created_at: i64,
    pub last_used: i64,
    pub started: i64,
    pub snapshot: Vec<u8>,
    /// The execution waiting in it, if any (a hint for recovery; the snapshot decides).
    pub waiting_execution: Option<String>,
}

impl Store {
    /// The owner of a container, if the store has it.
    pub async fn container_owner(&self, container_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self.container_row(container_id).await?.map(|row| row.owner))
    }

    /// A container's row in the index.
    pub async fn container_row(&self, container_id: &str) -> Result<Option<ContainerRow>, StoreError> {
        let row = sqlx::query("SELECT owner, created_at, closed_at, closed_reason FROM containers WHERE id = $1")
            .bind(container_id)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(ContainerRow {
            owner: row.try_get("owner")?,
            created_at: row.try_get("created_at")?,
            closed_at: row.try_get("closed_at")?,
            closed_reason: row.try_get("closed_reason")?,
        }))
    }

    /// Keeps a container's latest snapshot (replacing the one before), fenced by the lease:
    /// saved only while `node` holds an unexpired lease on the container, checked in the same
    /// statement. A node whose lease
    /// lapsed (another may have run the container since) gets `false` and saves nothing, so a
    /// newer snapshot is never overwritten with an older copy.
    pub async fn save_container(&self, container: &StoredContainer, node: &str) -> Result<bool, StoreError> {
        let result = sqlx::query(
            "INSERT INTO container_snapshots (container_id, owner, created_at, last_used, started, saved_at, snapshot, waiting_execution) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS (SELECT 1 FROM container_leases \
             WHERE container_id = $1 AND node = $9 AND expires_at >= $6) \
             ON CONFLICT (container_id) DO UPDATE SET \
             last_used = excluded.last_used, started = excluded.started, saved_at = excluded.saved_at, \
             snapshot = excluded.snapshot, waiting_execution = excluded.waiting_execution",
        )
        .bind(&container.container_id)
        .bind(&container.owner)
        .bind(container.created_at)
        .bind(container.last_used)
        .bind(container.started)
        .bind(now_ms())
        .bind(&container.snapshot)
        .bind(&container.waiting_execution)
        .bind(node)
        .execute(&self.pool)
        .await?;
        Ok(result.rows_affected() == 1)
    }

    pub async fn load_container(&self, container_id: &str) -> Result<Option<StoredContainer>, StoreError> {
        let row = sqlx::query(
            "SELECT container_id, owner, created_at, last_used, started, snapshot, waiting_execution \
             FROM container_snapshots WHERE container_id = $1",
        )
        .bind(container_id)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(StoredContainer {
            container_id: row.try_get("container_id")?,
            owner: row.try_get("owner")?,
            created_at: row.try_get("created_at")?,
            last_used: row.try_get("last_used")?,
            started: row.try_get("started")?,
            snapshot: row.try_get("snapshot")?,
            waiting_execution: row.try_get("waiting_execution")?,
        }))
    }

    pub async fn delete_container(&self, container_id: &str) -> Result<(), StoreError> {
        for sql in [
            "DELETE FROM container_snapshots WHERE container_id = $1",
            "DELETE FROM container_leases WHERE container_id = $1",
        ] {
            sqlx::query(sql).bind(container_id).execute(&self.pool).await?;
        }
        Ok(())
    }

    /// Takes or renews the lease on a container for `node` until `expires_at` (Unix ms);
    /// false while another node holds an unexpired lease.
    pub async fn acquire_lease(&self, container_id: &str, node: &str, expires_at: i64) -> Result<bool, StoreError> {
        let sql = "INSERT INTO container_leases (container_id, node, expires_at) VALUES ($1, $2, $3) \
                   ON CONFLICT (container_id) DO UPDATE SET node = excluded.node, expires_at = excluded.expires_at \
                   WHERE container_leases.node = excluded.node OR container_leases.expires_at < $4";
        self.lease_statement(sql, container_id, node, expires_at).await
    }

    /// Extends the lease `node` holds on a container to `expires_at` (Unix ms), only while
    /// the store still has it unexpired for `node`: false once it lapsed, even if no other
    /// node has taken it (taking it again is [`Store::acquire_lease`]'s, after a check).
    pub async fn renew_lease(&self, container_id: &str, node: &str, expires_at: i64) -> Result<bool, StoreError> {
        let sql =
            "UPDATE container_leases SET expires_at = $3 WHERE container_id = $1 AND node = $2 AND expires_at >= $4";
        self.lease_statement(sql, container_id, node, expires_at).await
    }

    /// Runs a lease statement on (container, node, new expiry, now): whether it changed a row.
    async fn lease_statement(
        &self,
        sql: &str,
        container_id: &str,
        node: &str,
        expires_at: i64,
    ) -> Result<bool, StoreError> {
        let result =
            sqlx::query(sql).bind(container_id).bind(node).bind(expires_at).bind(now_ms()).execute(&self.pool).await?;
        Ok(result.rows_affected() == 1)
    }

    /// Drops every lease: for a single node starting up, whose old leases name a past life.
    pub async fn clear_leases(&self) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM container_leases").execute(&self.pool).await?;
        Ok(())
    }

    pub async fn release_lease(&self, container_id: &str, node: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM container_leases WHERE container_id = $1 AND node = $2")
            .bind(container_id)
            .bind(node)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The last record of a container's chain: its sequence number and seal.
    pub async fn chain_head(&self, container_id: &str) -> Result<Option<(i64, String)>, StoreError> {
        let row = sqlx::query("SELECT seq, hash FROM audit_records WHERE container_id = $1 ORDER BY seq DESC LIMIT 1")
            .bind(container_id)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some((row.try_get("seq")?, row.try_get("hash")?)))
    }

    /// The chain head this node last wrote or read while appending to a container's chain,
    /// if it still has it: what its copy of the container has seen.
    pub fn cached_head(&self, container_id: &str) -> Option<(i64, String)> {
        self.heads.lock().unwrap_or_else(|p| p.into_inner()).get(container_id).cloned()
    }

    /// Reads a chain's head from the store and keeps it as the one this node has seen: for a
    /// copy of the container about to be brought up to it, under the lease.
    pub async fn refresh_head(&self, container_id: &str) -> Result<(), StoreError> {
        let head = self.chain_head(container_id).await?;
        self.cache_head(container_id, head);
        Ok(())
    }

    /// Forgets a cached chain head (another node may have appended to that chain).
    pub fn forget_head(&self, container_id: &str) {
        self.cache_head(container_id, None);
    }

    /// Unfinished executions of one container.
    pub async fn unfinished_in(&self, container_id: &str) -> Result<Vec<String>, StoreError> {
        let rows = sqlx::query("SELECT id FROM executions WHERE container_id = $1 AND status = $2 ORDER BY started_at")
            .bind(container_id)
            .bind("running")
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|row| Ok(row.try_get("id")?)).collect()
    }
}
