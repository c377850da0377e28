//! Files of the Files API in the store: their metadata and bytes, per key, listed newest first.

use super::{Store, StoreError, now_ms};
use sqlx::Row;

/// A file to keep. `id` is chosen by the caller (an output file's id is derived from its
/// execution and path, so the audit record can name it before the bytes are stored).
#[derive(Debug, Clone)]
pub struct NewFile<'a> {
    pub id: &'a str,
    pub owner: &'a str,
    pub filename: &'a str,
    pub mime_type: &'a str,
    pub sha256: &'a str,
    /// `upload` or `output`.
    pub source: &'a str,
    pub container_id: Option<&'a str>,
    pub execution_id: Option<&'a str>,
    pub content: &'a [u8],
}

/// A kept file's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRow {
    pub id: String,
    pub owner: String,
    pub filename: String,
    pub mime_type: String,
    pub size_bytes: i64,
    pub sha256: String,
    /// Unix milliseconds.
    pub created_at: i64,
    pub source: String,
    pub container_id: Option<String>,
    pub execution_id: Option<String>,
}

const COLUMNS: &str =
    "id, owner, filename, mime_type, size_bytes, sha256, created_at, source, container_id, execution_id";

fn file_row(row: &sqlx::any::AnyRow) -> Result<FileRow, StoreError> {
    Ok(FileRow {
        id: row.try_get("id")?,
        owner: row.try_get("owner")?,
        filename: row.try_get("filename")?,
        mime_type: row.try_get("mime_type")?,
        size_bytes: row.try_get("size_bytes")?,
        sha256: row.try_get("sha256")?,
        created_at: row.try_get("created_at")?,
        source: row.try_get("source")?,
        container_id: row.try_get("container_id")?,
        execution_id: row.try_get("execution_id")?,
    })
}

impl Store {
    /// Keeps a file; an output file stored again under its id (a retried save) is left as is.
    pub async fn insert_file(&self, file: &NewFile<'_>) -> Result<FileRow, StoreError> {
        let created_at = now_ms();
        sqlx::query(
            "INSERT INTO files (id, owner, filename, mime_type, size_bytes, sha256, created_at, source, \
             container_id, execution_id, content) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(file.id)
        .bind(file.owner)
        .bind(file.filename)
        .bind(file.mime_type)
        .bind(file.content.len() as i64)
        .bind(file.sha256)
        .bind(created_at)
        .bind(file.source)
        .bind(file.container_id)
        .bind(file.execution_id)
        .bind(file.content)
        .execute(&self.pool)
        .await?;
        self.file(file.owner, file.id).await?.ok_or_else(|| StoreError::Corrupt(format!("file {} vanished", file.id)))
    }

    /// `owner`'s file `id`, if it has it.
    pub async fn file(&self, owner: &str, id: &str) -> Result<Option<FileRow>, StoreError> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM files WHERE id = $1 AND owner = $2"))
            .bind(id)
            .bind(owner)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(file_row).transpose()
    }

    /// `owner`'s file `id` with its bytes.
    pub async fn file_content(&self, owner: &str, id: &str) -> Result<Option<(FileRow, Vec<u8>)>, StoreError> {
        let row = sqlx::query(&format!("SELECT {COLUMNS}, content FROM files WHERE id = $1 AND owner = $2"))
            .bind(id)
            .bind(owner)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some((file_row(&row)?, row.try_get("content")?)))
    }

    /// A page of `owner`'s files, newest first: those older than `after_id` (the next page)
    /// or newer than `before_id` (the page before); at most `limit`.
    pub async fn list_files(
        &self,
        owner: &str,
        after_id: Option<&str>,
        before_id: Option<&str>,
        limit: i64,
    ) -> Result<Vec<FileRow>, StoreError> {
        let cursor = match after_id.or(before_id) {
            Some(id) => match self.file(owner, id).await? {
                Some(row) => Some((row.created_at, row.id)),
                None => return Ok(Vec::new()),
            },
            None => None,
        };
        let (filter, order) = match (&cursor, before_id.is_some()) {
            (None, _) => ("", "DESC"),
            (Some(_), false) => (" AND (created_at < $2 OR (created_at = $2 AND id < $3))", "DESC"),
            (Some(_), true) => (" AND (created_at > $2 OR (created_at = $2 AND id > $3))", "ASC"),
        };
        let sql = format!(
            "SELECT {COLUMNS} FROM files WHERE owner = $1{filter} ORDER BY created_at {order}, id {order} LIMIT {limit}"
        );
        let mut query = sqlx::query(&sql).bind(owner);
        if let Some((created_at, id)) = &cursor {
            query = query.bind(*created_at).bind(id.clone());
        }
        let mut rows = query.fetch_all(&self.pool).await?.iter().map(file_row).collect::<Result<Vec<_>, _>>()?;
        if before_id.is_some() {
            rows.reverse();
        }
        Ok(rows)
    }

    /// Deletes `owner`'s file `id`; whether there was one.
    pub async fn delete_file(&self, owner: &str, id: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM files WHERE id = $1 AND owner = $2")
            .bind(id)
            .bind(owner)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// How many files `owner` keeps, and their bytes together.
    pub async fn file_usage(&self, owner: &str) -> Result<(u64, u64), StoreError> {
        // PostgreSQL's SUM of BIGINT is NUMERIC, which sqlx's Any driver cannot read: cast.
        let sql =
            "SELECT COUNT(*) AS n, CAST(COALESCE(SUM(size_bytes), 0) AS BIGINT) AS bytes FROM files WHERE owner = $1";
        let row = sqlx::query(sql).bind(owner).fetch_one(&self.pool).await?;
        let count: i64 = row.try_get("n")?;
        let bytes: i64 = row.try_get("bytes")?;
        Ok((count as u64, bytes as u64))
    }
}
