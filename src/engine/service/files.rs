//! Files: uploaded by a key, placed into its containers, written back by its executions, and
//! kept per key in the store (or in memory for a service without one).

use super::*;
use crate::audit::{FileRecord, FileRow, NewFile};
use crate::engine::files::{Upload, UploadBytes, mime_type_of, sha256_hex};
use crate::sandbox::OutputFile;

/// Largest file one upload may be: no container could hold a larger one.
pub(crate) const MAX_FILE_BYTES: usize = crate::sandbox::limits::MAX_STORAGE_BYTES as usize;
/// Files one key may keep, and their bytes together.
pub(crate) const MAX_FILES_PER_KEY: u64 = 10_000;
pub(crate) const MAX_FILE_BYTES_PER_KEY: u64 = 2 << 30;
/// Files one execution may be given.
pub(crate) const MAX_UPLOADS_PER_EXECUTION: usize = 100;
/// A service without a store keeps files in memory, this many bytes at most.
pub(crate) const MAX_MEMORY_FILE_BYTES: u64 = 256 << 20;

/// Files of a service without a store, oldest first.
#[derive(Default)]
pub(super) struct MemoryFiles {
    files: Vec<(FileRow, Arc<[u8]>)>,
    bytes: u64,
}

fn now_ms() -> i64 {
    ms(SystemTime::now())
}

impl Service {
    /// Keeps an uploaded file for `owner`.
    pub async fn upload_file(&self, owner: &Owner, filename: &str, content: &[u8]) -> Result<FileRow, ServiceError> {
        crate::sandbox::check_file_name(filename).map_err(|e| ServiceError::InvalidRequest(e.to_string()))?;
        if content.len() > MAX_FILE_BYTES {
            return Err(ServiceError::InvalidRequest(format!(
                "the file is {} bytes, more than {MAX_FILE_BYTES}",
                content.len()
            )));
        }
        within_quota(self.file_usage(owner).await?, content.len())?;
        let id = format!("file_{}", Uuid::new_v4().simple());
        let sha256 = sha256_hex(content);
        let file = NewFile {
            id: &id,
            owner,
            filename,
            mime_type: mime_type_of(filename),
            sha256: &sha256,
            source: "upload",
            container_id: None,
            execution_id: None,
            content,
        };
        self.keep_file(&file).await
    }

    async fn keep_file(&self, file: &NewFile<'_>) -> Result<FileRow, ServiceError> {
        if let Some(store) = &self.inner.store {
            return Ok(store.insert_file(file).await?);
        }
        let mut memory = lock(&self.inner.memory_files);
        if let Some((row, _)) = memory.files.iter().find(|(row, _)| row.id == file.id) {
            return Ok(row.clone());
        }
        if memory.bytes + file.content.len() as u64 > MAX_MEMORY_FILE_BYTES {
            return Err(ServiceError::Capacity(format!(
                "this service keeps files in memory, at most {MAX_MEMORY_FILE_BYTES} bytes"
            )));
        }
        let row = FileRow {
            id: file.id.to_owned(),
            owner: file.owner.to_owned(),
            filename: file.filename.to_owned(),
            mime_type: file.mime_type.to_owned(),
            size_bytes: file.content.len() as i64,
            sha256: file.sha256.to_owned(),
            created_at: now_ms(),
            source: file.source.to_owned(),
            container_id: file.container_id.map(str::to_owned),
            execution_id: file.execution_id.map(str::to_owned),
        };
        memory.bytes += file.content.len() as u64;
        memory.files.push((row.clone(), Arc::from(file.content)));
        Ok(row)
    }

    async fn file_usage(&self, owner: &Owner) -> Result<(u64, u64), ServiceError> {
        if let Some(store) = &self.inner.store {
            return Ok(store.file_usage(owner).await?);
        }
        let memory = lock(&self.inner.memory_files);
        let mine = memory.files.iter().filter(|(row, _)| &row.owner == owner);
        Ok(mine.fold((0, 0), |(n, bytes), (row, _)| (n + 1, bytes + row.size_bytes as u64)))
    }

    /// `owner`'s file `id`.
    pub async fn file(&self, owner: &Owner, id: &str) -> Result<FileRow, ServiceError> {
        let not_found = || ServiceError::NotFound(format!("file {id}"));
        if let Some(store) = &self.inner.store {
            return store.file(owner, id).await?.ok_or_else(not_found);
        }
        let memory = lock(&self.inner.memory_files);
        memory
            .files
            .iter()
            .find(|(row, _)| row.id == id && &row.owner == owner)
            .map(|(row, _)| row.clone())
            .ok_or_else(not_found)
    }

    /// `owner`'s file `id` with its bytes.
    pub async fn file_content(&self, owner: &Owner, id: &str) -> Result<(FileRow, Arc<[u8]>), ServiceError> {
        let not_found = || ServiceError::NotFound(format!("file {id}"));
        if let Some(store) = &self.inner.store {
            let (row, content) = store.file_content(owner, id).await?.ok_or_else(not_found)?;
            if sha256_hex(&content) != row.sha256 {
                return Err(ServiceError::Internal(format!("file {id} does not match its checksum")));
            }
            return Ok((row, content.into()));
        }
        let memory = lock(&self.inner.memory_files);
        memory.files.iter().find(|(row, _)| row.id == id && &row.owner == owner).cloned().ok_or_else(not_found)
    }

    /// A page of `owner`'s files, newest first, and whether more follow it.
    pub async fn list_files(
        &self,
        owner: &Owner,
        after_id: Option<&str>,
        before_id: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<FileRow>, bool), ServiceError> {
        let mut rows = if let Some(store) = &self.inner.store {
            store.list_files(owner, after_id, before_id, limit as i64 + 1).await?
        } else {
            let memory = lock(&self.inner.memory_files);
            let mut mine: Vec<FileRow> =
                memory.files.iter().rev().filter(|(row, _)| &row.owner == owner).map(|(row, _)| row.clone()).collect();
            if let Some(after) = after_id {
                let at = mine.iter().position(|r| r.id == after).map_or(mine.len(), |i| i + 1);
                mine.drain(..at);
            } else if let Some(before) = before_id {
                let at = mine.iter().position(|r| r.id == before).unwrap_or(0);
                mine.truncate(at);
                let keep_from = mine.len().saturating_sub(limit + 1);
                mine.drain(..keep_from);
            }
            mine.truncate(limit + 1);
            mine
        };
        let has_more = rows.len() > limit;
        if has_more {
            if before_id.is_some() {
                rows.remove(0);
            } else {
                rows.truncate(limit);
            }
        }
        Ok((rows, has_more))
    }

    /// Deletes `owner`'s file `id`. Containers it was placed in keep their copy.
    pub async fn delete_file(&self, owner: &Owner, id: &str) -> Result<(), ServiceError> {
        let deleted = if let Some(store) = &self.inner.store {
            store.delete_file(owner, id).await?
        } else {
            let mut memory = lock(&self.inner.memory_files);
            let before = memory.files.len();
            let mut freed = 0;
            memory.files.retain(|(row, _)| {
                let gone = row.id == id && &row.owner == owner;
                freed += if gone { row.size_bytes as u64 } else { 0 };
                !gone
            });
            memory.bytes -= freed;
            memory.files.len() < before
        };
        if !deleted {
            return Err(ServiceError::NotFound(format!("file {id}")));
        }
        Ok(())
    }

    /// The files `ids` names, ready to place in a container whose storage limit is
    /// `storage_bytes`: each `owner`'s, names distinct, their sizes within the limit.
    pub(super) async fn uploads_for(
        &self,
        owner: &Owner,
        ids: &[String],
        storage_bytes: u64,
    ) -> Result<Vec<Upload>, ServiceError> {
        if ids.len() > MAX_UPLOADS_PER_EXECUTION {
            return Err(ServiceError::InvalidRequest(format!(
                "{} files for one execution, more than {MAX_UPLOADS_PER_EXECUTION}",
                ids.len()
            )));
        }
        let mut uploads: Vec<Upload> = Vec::with_capacity(ids.len());
        let mut total = 0u64;
        for id in ids {
            let (row, content) = self.file_content(owner, id).await.map_err(|e| match e {
                ServiceError::NotFound(what) => ServiceError::InvalidRequest(format!("{what} not found")),
                other => other,
            })?;
            if uploads.iter().any(|u| u.record.path == row.filename) {
                return Err(ServiceError::InvalidRequest(format!(
                    "two files named {:?} for one execution",
                    row.filename
                )));
            }
            total += content.len() as u64;
            if total > storage_bytes {
                return Err(ServiceError::InvalidRequest(format!(
                    "the files given are {total} bytes or more, past the storage limit of {storage_bytes} bytes"
                )));
            }
            // `file_content` checked the bytes against the stored hash: no need to hash them again.
            uploads.push(Upload::checked(row.id, row.filename, row.sha256, content));
        }
        Ok(uploads)
    }

    /// The bytes of the files `ids` names, for a replay: those still stored (a replay that needs
    /// one no longer stored says so).
    pub(super) async fn upload_bytes(&self, owner: &Owner, ids: &[String]) -> Result<UploadBytes, ServiceError> {
        let mut bytes = UploadBytes::new();
        for id in ids {
            match self.file_content(owner, id).await {
                Ok((_, content)) => {
                    bytes.insert(id.clone(), content);
                }
                Err(ServiceError::NotFound(_)) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(bytes)
    }

    /// Keeps an execution's output files under the ids its audit record gave them, within the
    /// key's quota (its usage read once, then counted on); returns the ids kept and why the
    /// others were not.
    pub(super) async fn keep_outputs(
        &self,
        owner: &Owner,
        container_id: &str,
        execution_id: &str,
        records: &[FileRecord],
        files: &[OutputFile],
    ) -> (Vec<String>, Option<ServiceError>) {
        let mut kept = Vec::new();
        let mut usage = match self.file_usage(owner).await {
            Ok(usage) => usage,
            Err(e) => return (kept, Some(e)),
        };
        for (record, file) in records.iter().zip(files) {
            if let Err(e) = within_quota(usage, file.bytes.len()) {
                return (kept, Some(e));
            }
            let new = NewFile {
                id: &record.file_id,
                owner,
                filename: &record.path,
                mime_type: mime_type_of(&record.path),
                sha256: &record.sha256,
                source: "output",
                container_id: Some(container_id),
                execution_id: Some(execution_id),
                content: &file.bytes,
            };
            if let Err(e) = self.keep_file(&new).await {
                return (kept, Some(e));
            }
            usage = (usage.0 + 1, usage.1 + file.bytes.len() as u64);
            kept.push(record.file_id.clone());
        }
        (kept, None)
    }
}

/// Refuses a file of `adding` bytes to a key that keeps `(count, bytes)` already, past its quota.
fn within_quota((count, bytes): (u64, u64), adding: usize) -> Result<(), ServiceError> {
    if count >= MAX_FILES_PER_KEY || bytes + adding as u64 > MAX_FILE_BYTES_PER_KEY {
        return Err(ServiceError::Quota(format!(
            "this API key keeps {count} files of {bytes} bytes; it may keep {MAX_FILES_PER_KEY} files of \
             {MAX_FILE_BYTES_PER_KEY} bytes: delete some first"
        )));
    }
    Ok(())
}
