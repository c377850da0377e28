//! Files an execution is given and gives back, as the engine names and records them.

use crate::audit::FileRecord;
use crate::sandbox::{OutputFile, PlacedFile};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Arc;

/// A stored file to put into the working directory under `record.path`.
#[derive(Debug, Clone)]
pub struct Upload {
    pub record: FileRecord,
    pub bytes: Arc<[u8]>,
}

impl Upload {
    pub fn new(file_id: String, name: String, bytes: Arc<[u8]>) -> Self {
        let sha256 = sha256_hex(&bytes);
        Self::checked(file_id, name, sha256, bytes)
    }

    /// An upload whose `sha256` was already checked against its bytes.
    pub(crate) fn checked(file_id: String, name: String, sha256: String, bytes: Arc<[u8]>) -> Self {
        Self { record: FileRecord { file_id, path: name, size_bytes: bytes.len() as u64, sha256 }, bytes }
    }

    pub(crate) fn placed(&self) -> PlacedFile {
        PlacedFile { name: self.record.path.clone(), bytes: self.bytes.clone() }
    }
}

/// Bytes of stored files by id: what replay needs to place an execution's uploads again.
pub type UploadBytes = HashMap<String, Arc<[u8]>>;

/// The uploads `records` name, taken from `bytes` and checked against each recorded hash.
pub(crate) fn recorded_uploads(records: &[FileRecord], bytes: &UploadBytes) -> Result<Vec<PlacedFile>, String> {
    records
        .iter()
        .map(|record| {
            let content = bytes.get(&record.file_id).ok_or_else(|| {
                format!("file {} ({}) is no longer stored, so it cannot be placed again", record.file_id, record.path)
            })?;
            if sha256_hex(content) != record.sha256 {
                return Err(format!("file {} ({}) differs from the one recorded", record.file_id, record.path));
            }
            Ok(PlacedFile { name: record.path.clone(), bytes: content.clone() })
        })
        .collect()
}

/// An output file's id: derived from its execution and path, so the execution's audit record
/// names it before the bytes are stored, and a retried save stores it once.
pub(crate) fn output_file_id(execution_id: &str, path: &str) -> String {
    let digest = Sha256::new().chain_update(execution_id).chain_update([0]).chain_update(path).finalize();
    format!("file_{}", &crate::call::hex(&digest)[..32])
}

/// The audit's record of an output file.
pub(crate) fn output_record(execution_id: &str, file: &OutputFile) -> FileRecord {
    FileRecord {
        file_id: output_file_id(execution_id, &file.path),
        path: file.path.clone(),
        size_bytes: file.bytes.len() as u64,
        sha256: sha256_hex(&file.bytes),
    }
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    crate::call::hex(&Sha256::digest(bytes))
}

/// A MIME type from a file name's extension (what the Files API reports; bytes decide nothing).
pub(crate) fn mime_type_of(name: &str) -> &'static str {
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match extension.as_str() {
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "txt" | "log" => "text/plain",
        "md" => "text/markdown",
        "json" => "application/json",
        "jsonl" | "ndjson" => "application/x-ndjson",
        "html" | "htm" => "text/html",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        "py" => "text/x-python",
        "sqlite" | "db" => "application/vnd.sqlite3",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_ids_are_stable_and_distinct() {
        let id = output_file_id("exec_1", "out.csv");
        assert_eq!(id, output_file_id("exec_1", "out.csv"));
        assert_ne!(id, output_file_id("exec_2", "out.csv"));
        assert_ne!(id, output_file_id("exec_1", "out.json"));
        assert!(id.starts_with("file_") && id.len() == 37);
    }

    #[test]
    fn recorded_uploads_check_their_hash() {
        let upload = Upload::new("file_a".into(), "a.csv".into(), Arc::from(&b"x,y\n"[..]));
        let mut bytes = UploadBytes::new();
        assert!(recorded_uploads(std::slice::from_ref(&upload.record), &bytes).unwrap_err().contains("no longer"));
        bytes.insert("file_a".into(), Arc::from(&b"x,z\n"[..]));
        assert!(recorded_uploads(std::slice::from_ref(&upload.record), &bytes).unwrap_err().contains("differs"));
        bytes.insert("file_a".into(), upload.bytes.clone());
        assert_eq!(recorded_uploads(&[upload.record], &bytes).unwrap()[0].name, "a.csv");
    }
}
