//! Files crossing the sandbox's wall: those the host places in a container's working
//! directory, and those an execution created or changed there, checked before the host keeps
//! them (the tree itself lives in the guest, `runtime/_sluice_fs.py`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Changed files one execution may hand back (the guest's `MAX_OUTPUT_FILES`).
pub(crate) const MAX_OUTPUT_FILES: usize = 100;
/// Longest name of one path component, as POSIX's `NAME_MAX`.
pub(crate) const MAX_FILE_NAME_BYTES: usize = 255;
/// Longest path under the working directory.
pub(crate) const MAX_FILE_PATH_BYTES: usize = 4_096;

/// A file put into the working directory before the code runs, under `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedFile {
    pub name: String,
    pub bytes: Arc<[u8]>,
}

impl Serialize for PlacedFile {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.name, STANDARD.encode(&self.bytes)).serialize(serializer)
    }
}

/// A file the execution created or changed, by its path under the working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// `[path, base64]` as the guest sends it; checked by [`decode_outputs`].
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct RawOutputFile(pub String, pub String);

/// Why a name or an output file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FileNameError {
    #[error("a file name must not be empty")]
    Empty,
    #[error("a file name of {0} bytes is longer than {MAX_FILE_NAME_BYTES}")]
    TooLong(usize),
    #[error("a file name must not contain '/', a NUL or a control character, nor be '.' or '..': {0:?}")]
    Forbidden(String),
}

/// A name the working directory can hold as one entry: not empty, no separator, no NUL or
/// control character, not `.` or `..`, at most [`MAX_FILE_NAME_BYTES`] bytes.
pub(crate) fn check_file_name(name: &str) -> Result<(), FileNameError> {
    if name.is_empty() {
        return Err(FileNameError::Empty);
    }
    if name.len() > MAX_FILE_NAME_BYTES {
        return Err(FileNameError::TooLong(name.len()));
    }
    if name == "." || name == ".." || name.chars().any(|c| c == '/' || c.is_control()) {
        return Err(FileNameError::Forbidden(name.to_owned()));
    }
    Ok(())
}

/// A relative path whose every component is a valid name: what an output file may be called,
/// so joining it to a directory can never leave that directory.
pub(crate) fn check_relative_path(path: &str) -> Result<(), FileNameError> {
    if path.len() > MAX_FILE_PATH_BYTES {
        return Err(FileNameError::TooLong(path.len()));
    }
    if path.starts_with('/') {
        return Err(FileNameError::Forbidden(path.to_owned()));
    }
    path.split('/').try_for_each(check_file_name)
}

/// The guest's output files, decoded and checked: at most [`MAX_OUTPUT_FILES`], distinct
/// valid relative paths, `max_total` bytes together (the storage limit: the guest's tree
/// cannot have held more).
pub(crate) fn decode_outputs(raw: Vec<RawOutputFile>, max_total: u64) -> Result<Vec<OutputFile>, String> {
    if raw.len() > MAX_OUTPUT_FILES {
        return Err(format!("{} output files, more than {MAX_OUTPUT_FILES}", raw.len()));
    }
    let mut total = 0u64;
    let mut seen = std::collections::BTreeSet::new();
    raw.into_iter()
        .map(|RawOutputFile(path, encoded)| {
            check_relative_path(&path).map_err(|e| format!("output file: {e}"))?;
            // Base64 is four characters for three bytes: bound before decoding.
            total += encoded.len() as u64 / 4 * 3;
            if total > max_total.saturating_add(3 * MAX_OUTPUT_FILES as u64) {
                return Err(format!("output files larger than the storage limit of {max_total} bytes"));
            }
            let bytes = STANDARD.decode(encoded.as_bytes()).map_err(|e| format!("output file {path:?}: {e}"))?;
            if !seen.insert(path.clone()) {
                return Err(format!("output file {path:?} named twice"));
            }
            Ok(OutputFile { path, bytes })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_leave_the_directory_are_refused() {
        for bad in ["", ".", "..", "a/b", "a\0b", "line\nbreak", &"x".repeat(256)] {
            assert!(check_file_name(bad).is_err(), "{bad:?} was accepted");
        }
        for good in ["data.csv", "ünïcödé 名前.txt", "a b (1).json", ".hidden", &"x".repeat(255)] {
            assert_eq!(check_file_name(good), Ok(()), "{good:?} was refused");
        }
        for bad in ["/etc/passwd", "../up", "a/../../b", "a//b", "a/", "./a"] {
            assert!(check_relative_path(bad).is_err(), "{bad:?} was accepted");
        }
        assert_eq!(check_relative_path("out/summary.csv"), Ok(()));
    }

    #[test]
    fn outputs_are_bounded_in_number_and_size_and_decoded() {
        let file = |path: &str, text: &str| RawOutputFile(path.into(), STANDARD.encode(text));
        let decoded = decode_outputs(vec![file("a.txt", "hello"), file("d/b.txt", "")], 100).unwrap();
        assert_eq!(decoded[0], OutputFile { path: "a.txt".into(), bytes: b"hello".to_vec() });
        assert_eq!(decoded[1].bytes, b"");
        let too_many = (0..=MAX_OUTPUT_FILES).map(|i| file(&format!("{i}"), "")).collect();
        assert!(decode_outputs(too_many, 100).is_err());
        assert!(decode_outputs(vec![file("big", &"x".repeat(10_000))], 1_000).is_err());
        assert!(decode_outputs(vec![file("../x", "a")], 100).is_err());
        assert!(decode_outputs(vec![file("x", "a"), file("x", "b")], 100).is_err());
        assert!(decode_outputs(vec![RawOutputFile("x".into(), "not base64!".into())], 100).is_err());
    }
}
