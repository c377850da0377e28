//! The chains in the store: appending records and keeping the executions index in step, reading
//! records back, listing executions, token counts, verifying every chain, pruning old ones.

use super::{Backend, Store, StoreError, now_ms};
use crate::audit::{
    ChainBreak, ContainerHistory, Event, ForkPoint, GENESIS_HASH, Record, Recorder, record_hash, unix_ms, verify_chain,
};
use sqlx::Row;
use sqlx::any::AnyRow;
use std::future::Future;
use std::pin::Pin;
use std::time::SystemTime;

/// The columns of `audit_records`, in the order every query names them (`record_from_row`
/// reads them by name). A macro, so queries stay `&'static str` through `concat!`.
macro_rules! record_columns {
    () => {
        "container_id, seq, kind, execution_id, recorded_at, body, prev_hash, hash"
    };
}

/// Rows a listing returns at most.
pub(crate) const MAX_LIST_ROWS: i64 = 1_000;
/// Records per INSERT statement on PostgreSQL (8 parameters each; a round trip per
/// statement is what costs there).
const POSTGRES_ROWS_PER_INSERT: usize = 500;
/// ... and on SQLite, where binding a parameter looks its name up among all of the statement's
/// (quadratic in their number: 500 rows spent more time binding than writing).
const SQLITE_ROWS_PER_INSERT: usize = 32;
/// Chain heads kept in memory (container id -> last seq and hash).
const MAX_CACHED_HEADS: usize = 100_000;

/// A row of the executions index.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ExecutionRow {
    pub id: String,
    pub container_id: String,
    pub number: i64,
    pub status: String,
    pub outcome: Option<String>,
    pub return_code: Option<i64>,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub tools: Vec<String>,
    pub tool_result_tokens: Option<i64>,
    pub returned_tokens: Option<i64>,
    /// The token figures are partly estimated (the text was longer than is counted exactly).
    pub tokens_estimated: bool,
}

/// Filters of an execution listing; all optional.
#[derive(Debug, Clone, Default)]
pub struct ExecutionFilter {
    pub owner: Option<String>,
    pub container_id: Option<String>,
    /// Unix milliseconds, inclusive.
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub outcome: Option<String>,
    /// `completed` (python errors included: see `outcome`), `failed` (a limit or the host
    /// stopped it) or `running`.
    pub status: Option<String>,
    pub tool: Option<String>,
    /// Executions with a call `approved`, `denied`, or `asked` about (a person was asked).
    pub approval: Option<String>,
    /// Only executions listed after this one (its id): the next page of a listing.
    pub before: Option<String>,
    pub limit: Option<i64>,
}

/// What `verify` found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub containers: usize,
    pub records: usize,
    pub broken: Option<ChainBreak>,
}

impl Store {
    /// Keeps `head` as the chain head this node has seen for a container, within the cache's
    /// bound, or forgets it (`None`).
    pub(super) fn cache_head(&self, container_id: &str, head: Option<(i64, String)>) {
        let mut heads = self.heads.lock().unwrap_or_else(|p| p.into_inner());
        match head {
            Some(head) => {
                if heads.len() >= MAX_CACHED_HEADS {
                    heads.clear();
                }
                heads.insert(container_id.to_owned(), head);
            }
            None => {
                heads.remove(container_id);
            }
        }
    }

    /// Appends events to a container's chain in one transaction, and updates the index.
    pub async fn append(&self, container_id: &str, events: &[Event]) -> Result<(), StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        let mut tx = self.begin_write().await?;
        let cached = self.cached_head(container_id);
        let (mut seq, mut prev_hash) = match cached {
            Some(head) => head,
            None => {
                let row = sqlx::query(
                    "SELECT seq, hash FROM audit_records WHERE container_id = $1 ORDER BY seq DESC LIMIT 1",
                )
                .bind(container_id)
                .fetch_optional(&mut *tx)
                .await?;
                match row {
                    Some(row) => (row.try_get::<i64, _>("seq")?, row.try_get::<String, _>("hash")?),
                    None => (-1, GENESIS_HASH.to_owned()),
                }
            }
        };
        let recorded_at = now_ms();
        let mut rows = Vec::with_capacity(events.len());
        for event in events {
            seq += 1;
            let body = serde_json::to_string(event).expect("events serialize");
            let hash = record_hash(&self.chain_key, &prev_hash, container_id, seq, event.kind(), recorded_at, &body);
            rows.push((seq, event, body, std::mem::replace(&mut prev_hash, hash.clone()), hash));
            index(&mut tx, container_id, event, recorded_at).await?;
        }
        // One statement for the whole batch: a round trip per record would cost more than
        // the records themselves.
        let rows_per_insert = match self.backend {
            Backend::Sqlite => SQLITE_ROWS_PER_INSERT,
            Backend::Postgres => POSTGRES_ROWS_PER_INSERT,
        };
        for chunk in rows.chunks(rows_per_insert) {
            let placeholders: Vec<String> = (0..chunk.len())
                .map(|row| {
                    let base = row * 8;
                    format!(
                        "(${}, ${}, ${}, ${}, ${}, ${}, ${}, ${})",
                        base + 1,
                        base + 2,
                        base + 3,
                        base + 4,
                        base + 5,
                        base + 6,
                        base + 7,
                        base + 8
                    )
                })
                .collect();
            let sql = format!(
                concat!("INSERT INTO audit_records (", record_columns!(), ") VALUES {}"),
                placeholders.join(", ")
            );
            let mut insert = sqlx::query(&sql);
            for (seq, event, body, prev, hash) in chunk {
                insert = insert
                    .bind(container_id)
                    .bind(*seq)
                    .bind(event.kind())
                    .bind(event.execution_id())
                    .bind(recorded_at)
                    .bind(body.as_str())
                    .bind(prev.as_str())
                    .bind(hash.as_str());
            }
            insert.execute(&mut *tx).await?;
        }
        match tx.commit().await {
            Ok(()) => {
                self.cache_head(container_id, Some((seq, prev_hash)));
                Ok(())
            }
            Err(e) => {
                self.cache_head(container_id, None);
                Err(e.into())
            }
        }
    }

    /// A container's chain, in order.
    pub async fn records(&self, container_id: &str) -> Result<Vec<Record>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            record_columns!(),
            " FROM audit_records WHERE container_id = $1 ORDER BY seq"
        ))
        .bind(container_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(record_from_row).collect()
    }

    /// A container's records after `seq`, in order.
    pub async fn records_after(&self, container_id: &str, seq: i64) -> Result<Vec<Record>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            record_columns!(),
            " FROM audit_records WHERE container_id = $1 AND seq > $2 ORDER BY seq"
        ))
        .bind(container_id)
        .bind(seq)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(record_from_row).collect()
    }

    /// The records of one execution up to `seq` (the part of it a snapshot already holds).
    pub async fn execution_records(
        &self,
        container_id: &str,
        execution_id: &str,
        up_to: i64,
    ) -> Result<Vec<Record>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            record_columns!(),
            " FROM audit_records WHERE container_id = $1 AND execution_id = $2 AND seq <= $3 ORDER BY seq"
        ))
        .bind(container_id)
        .bind(execution_id)
        .bind(up_to)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(record_from_row).collect()
    }

    /// When the last record of a container's chain was written (Unix ms).
    pub async fn last_activity(&self, container_id: &str) -> Result<Option<i64>, StoreError> {
        let row =
            sqlx::query("SELECT recorded_at FROM audit_records WHERE container_id = $1 ORDER BY seq DESC LIMIT 1")
                .bind(container_id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|row| row.try_get("recorded_at")).transpose()?)
    }

    /// One record of a chain.
    pub async fn record_at(&self, container_id: &str, seq: i64) -> Result<Option<Record>, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            record_columns!(),
            " FROM audit_records WHERE container_id = $1 AND seq = $2"
        ))
        .bind(container_id)
        .bind(seq)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(record_from_row).transpose()
    }

    /// A container's whole chain, checked (seals, links, and for a fork the parent's record it
    /// names), and put together as its history. `Ok(None)` when there is no such chain.
    pub async fn verified_history(&self, container_id: &str) -> Result<Option<ContainerHistory>, StoreError> {
        let records = self.records(container_id).await?;
        if records.is_empty() {
            return Ok(None);
        }
        verify_chain(&self.chain_key, container_id, &records).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let history = ContainerHistory::from_records(container_id, &records).map_err(StoreError::Corrupt)?;
        if let Some(fork) = &history.forked_from {
            self.check_fork_point(container_id, fork).await.map_err(|e| StoreError::Corrupt(e.to_string()))?;
        }
        Ok(Some(history))
    }

    /// Whether the parent's record a fork names is still the one it was forked from.
    async fn check_fork_point(&self, container_id: &str, fork: &ForkPoint) -> Result<(), ChainBreak> {
        let record = self.record_at(&fork.container_id, fork.seq).await.ok().flatten();
        if record.is_some_and(|r| r.hash == fork.hash) {
            return Ok(());
        }
        Err(ChainBreak {
            container_id: container_id.to_owned(),
            seq: 0,
            problem: format!(
                "forked from record {} of {}, which is missing or was changed since",
                fork.seq, fork.container_id
            ),
        })
    }

    /// The container an execution ran in.
    pub async fn container_of(&self, execution_id: &str) -> Result<Option<(String, String)>, StoreError> {
        let row = sqlx::query("SELECT container_id, owner FROM executions WHERE id = $1")
            .bind(execution_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(match row {
            Some(row) => Some((row.try_get("container_id")?, row.try_get("owner")?)),
            None => None,
        })
    }

    pub async fn list_executions(&self, filter: &ExecutionFilter) -> Result<Vec<ExecutionRow>, StoreError> {
        let mut sql = String::from(
            "SELECT id, container_id, number, status, outcome, return_code, started_at, finished_at, tools, \
             tool_result_tokens, returned_tokens, tokens_estimated FROM executions WHERE 1 = 1",
        );
        let mut binds: Vec<Bind> = Vec::new();
        let mut clause = |sql: &mut String, text: &str, bind: Bind| {
            binds.push(bind);
            sql.push_str(&format!(" AND {text} ${}", binds.len()));
        };
        if let Some(owner) = &filter.owner {
            clause(&mut sql, "owner =", Bind::Text(owner.clone()));
        }
        if let Some(container) = &filter.container_id {
            clause(&mut sql, "container_id =", Bind::Text(container.clone()));
        }
        if let Some(since) = filter.since {
            clause(&mut sql, "started_at >=", Bind::Int(since));
        }
        if let Some(until) = filter.until {
            clause(&mut sql, "started_at <=", Bind::Int(until));
        }
        if let Some(outcome) = &filter.outcome {
            clause(&mut sql, "outcome =", Bind::Text(outcome.clone()));
        }
        if let Some(status) = &filter.status {
            clause(&mut sql, "status =", Bind::Text(status.clone()));
        }
        if let Some(tool) = &filter.tool {
            clause(&mut sql, "tools LIKE", Bind::Text(format!("%,{},%", tool.replace(['%', '_'], ""))));
        }
        if let Some(approval) = &filter.approval {
            clause(&mut sql, "approvals LIKE", Bind::Text(format!("%,{},%", approval.replace(['%', '_'], ""))));
        }
        if let Some(before) = &filter.before {
            // Keyset paging in the listing's order (newest first, ties by id): with the index
            // on (owner, started_at, id), a walk however deep the page.
            binds.push(Bind::Text(before.clone()));
            let (n, start) = (binds.len(), "(SELECT started_at FROM executions WHERE id = ");
            sql.push_str(&format!(" AND (started_at < {start}${n}) OR (started_at = {start}${n}) AND id < ${n}))"));
        }
        let limit = filter.limit.unwrap_or(MAX_LIST_ROWS).clamp(1, MAX_LIST_ROWS);
        sql.push_str(&format!(" ORDER BY started_at DESC, id DESC LIMIT {limit}"));
        let mut query = sqlx::query(&sql);
        for bind in binds {
            query = match bind {
                Bind::Text(text) => query.bind(text),
                Bind::Int(value) => query.bind(value),
            };
        }
        let rows = query.fetch_all(&self.pool).await?;
        rows.iter().map(execution_from_row).collect()
    }

    /// Executions with a start and no end on record: (container, execution), oldest first.
    pub async fn unfinished_executions(&self) -> Result<Vec<(String, String)>, StoreError> {
        let rows = sqlx::query("SELECT container_id, id FROM executions WHERE status = $1 ORDER BY started_at")
            .bind("running")
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|row| Ok((row.try_get("container_id")?, row.try_get("id")?))).collect()
    }

    /// Token counts of an execution, computed after it finished; `estimated` when part of
    /// either figure is an estimate.
    pub async fn set_tokens(
        &self,
        execution_id: &str,
        tool_result_tokens: i64,
        returned_tokens: i64,
        estimated: bool,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE executions SET tool_result_tokens = $1, returned_tokens = $2, tokens_estimated = $3 WHERE id = $4",
        )
        .bind(tool_result_tokens)
        .bind(returned_tokens)
        .bind(i64::from(estimated))
        .bind(execution_id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Checks every chain (seals, links, fork points) and that the index agrees with the
    /// chains on who owns each container and execution; the first break, if any.
    pub async fn verify(&self) -> Result<VerifyReport, StoreError> {
        let containers: Vec<String> =
            sqlx::query("SELECT DISTINCT container_id FROM audit_records ORDER BY container_id")
                .fetch_all(&self.pool)
                .await?
                .iter()
                .map(|row| row.try_get("container_id"))
                .collect::<Result<_, _>>()?;
        let mut report = VerifyReport::default();
        let broken = |container_id: &str, seq: i64, problem: String| ChainBreak {
            container_id: container_id.to_owned(),
            seq,
            problem,
        };
        for container in &containers {
            let records = self.records(container).await?;
            report.records += records.len();
            report.containers += 1;
            if let Err(broken) = verify_chain(&self.chain_key, container, &records) {
                report.broken = Some(broken);
                return Ok(report);
            }
            let history = match ContainerHistory::from_records(container, &records) {
                Ok(history) => history,
                Err(why) => {
                    report.broken = Some(broken(container, 0, format!("unreadable: {why}")));
                    return Ok(report);
                }
            };
            if let Some(fork) = &history.forked_from
                && let Err(fork_broken) = self.check_fork_point(container, fork).await
            {
                report.broken = Some(fork_broken);
                return Ok(report);
            }
            if let Some(problem) = self.index_disagrees(container, &history).await? {
                report.broken = Some(broken(container, 0, problem));
                return Ok(report);
            }
        }
        let known: Vec<String> = sqlx::query("SELECT id FROM containers")
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(|row| row.try_get("id"))
            .collect::<Result<_, _>>()?;
        if let Some(missing) = known.iter().find(|id| !containers.contains(id)) {
            report.broken = Some(broken(missing, 0, "every record is missing: deleted".into()));
        }
        Ok(report)
    }

    /// How the index (used to decide who may see what) differs from the sealed chain.
    async fn index_disagrees(&self, container: &str, history: &ContainerHistory) -> Result<Option<String>, StoreError> {
        match self.container_owner(container).await? {
            Some(owner) if owner == history.owner => {}
            Some(owner) => {
                return Ok(Some(format!("the index names owner {owner:?}, the chain {:?}", history.owner)));
            }
            None => return Ok(Some("the container is missing from the index".into())),
        }
        let rows = sqlx::query("SELECT id, owner FROM executions WHERE container_id = $1")
            .bind(container)
            .fetch_all(&self.pool)
            .await?;
        for row in rows {
            let (id, owner): (String, String) = (row.try_get("id")?, row.try_get("owner")?);
            match history.execution(&id) {
                Some(execution) if execution.owner == owner => {}
                Some(execution) => {
                    return Ok(Some(format!(
                        "execution {id}: the index names owner {owner:?}, the chain {:?}",
                        execution.owner
                    )));
                }
                None => return Ok(Some(format!("execution {id} is in the index but not in the chain"))),
            }
        }
        Ok(None)
    }

    /// Deletes the whole history of containers idle since before `cutoff` (whole chains only,
    /// so what remains still verifies); returns how many containers went.
    pub async fn prune(&self, cutoff: SystemTime) -> Result<u64, StoreError> {
        let cutoff = unix_ms(cutoff) as i64;
        let mut tx = self.begin_write().await?;
        // A container's last activity is its newest record.
        let old: Vec<String> = sqlx::query(
            "SELECT container_id AS id FROM audit_records GROUP BY container_id HAVING MAX(recorded_at) < $1",
        )
        .bind(cutoff)
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|row| row.try_get("id"))
        .collect::<Result<_, _>>()?;
        for id in &old {
            for table in [
                "DELETE FROM audit_records WHERE container_id = $1",
                "DELETE FROM executions WHERE container_id = $1",
                "DELETE FROM containers WHERE id = $1",
            ] {
                sqlx::query(table).bind(id).execute(&mut *tx).await?;
            }
        }
        tx.commit().await?;
        let mut heads = self.heads.lock().unwrap_or_else(|p| p.into_inner());
        for id in &old {
            heads.remove(id);
        }
        Ok(old.len() as u64)
    }
}

impl Recorder for Store {
    fn record<'a>(
        &'a self,
        container_id: &'a str,
        events: Vec<Event>,
    ) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>> {
        Box::pin(async move { self.append(container_id, &events).await })
    }
}

enum Bind {
    Text(String),
    Int(i64),
}

/// Keeps the executions and containers index in step with the chain.
async fn index(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    container_id: &str,
    event: &Event,
    at: i64,
) -> Result<(), StoreError> {
    match event {
        Event::ContainerCreated { owner, seed, image_hash, .. } => {
            sqlx::query("INSERT INTO containers (id, owner, seed, image_hash, created_at) VALUES ($1, $2, $3, $4, $5)")
                .bind(container_id)
                .bind(owner)
                .bind(seed)
                .bind(image_hash)
                .bind(at)
                .execute(&mut **tx)
                .await?;
        }
        Event::ExecutionStarted { execution_id, owner, number, started_at, .. } => {
            sqlx::query(
                "INSERT INTO executions (id, container_id, owner, number, status, started_at) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(execution_id)
            .bind(container_id)
            .bind(owner)
            .bind(*number as i64)
            .bind("running")
            .bind(*started_at as i64)
            .execute(&mut **tx)
            .await?;
        }
        Event::ExecutionFinished(finished) => {
            let listed = |names: &mut dyn Iterator<Item = &String>| {
                std::iter::once(String::new())
                    .chain(names.cloned())
                    .chain(std::iter::once(String::new()))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let tools = listed(&mut finished.auto_counts.calls_per_tool.keys());
            let approvals = listed(&mut finished.auto_counts.approvals.keys());
            sqlx::query(
                "UPDATE executions SET status = $1, outcome = $2, return_code = $3, finished_at = $4, tools = $5, \
                 approvals = $6 WHERE id = $7",
            )
            .bind(finished.status.as_str())
            .bind(finished.outcome.as_str())
            .bind(finished.return_code)
            .bind(finished.finished_at as i64)
            .bind(tools)
            .bind(approvals)
            .bind(&finished.execution_id)
            .execute(&mut **tx)
            .await?;
        }
        Event::ContainerClosed { reason } => {
            sqlx::query("UPDATE containers SET closed_at = $1, closed_reason = $2 WHERE id = $3")
                .bind(at)
                .bind(reason)
                .bind(container_id)
                .execute(&mut **tx)
                .await?;
        }
        Event::Step { .. } | Event::ToolCall { .. } | Event::ModelCall(_) => {}
    }
    Ok(())
}

fn record_from_row(row: &AnyRow) -> Result<Record, StoreError> {
    Ok(Record {
        container_id: row.try_get("container_id")?,
        seq: row.try_get("seq")?,
        kind: row.try_get("kind")?,
        execution_id: row.try_get("execution_id")?,
        recorded_at: row.try_get("recorded_at")?,
        body: row.try_get("body")?,
        prev_hash: row.try_get("prev_hash")?,
        hash: row.try_get("hash")?,
    })
}

fn execution_from_row(row: &AnyRow) -> Result<ExecutionRow, StoreError> {
    let tools: String = row.try_get("tools")?;
    Ok(ExecutionRow {
        id: row.try_get("id")?,
        container_id: row.try_get("container_id")?,
        number: row.try_get("number")?,
        status: row.try_get("status")?,
        outcome: row.try_get("outcome")?,
        return_code: row.try_get("return_code")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        tools: tools.split(',').filter(|t| !t.is_empty()).map(str::to_owned).collect(),
        tool_result_tokens: row.try_get("tool_result_tokens")?,
        returned_tokens: row.try_get("returned_tokens")?,
        tokens_estimated: row.try_get::<i64, _>("tokens_estimated")? != 0,
    })
}
