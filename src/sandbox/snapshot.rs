//! Container snapshots on the wire: a checkpoint (memory pages that differ from the image,
//! and the host state the guest sees) plus the inputs since, tied to the image they belong
//! to and sealed with an HMAC so that a tampered or foreign snapshot is refused.
//!
//! Layout: `MAGIC`, the HMAC-SHA256 of the rest, then the rest: a u32 header length, the
//! header (JSON), and one LZ4 block holding the pages and the step frames back to back.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// Bump when the layout or the meaning of a field changes; older snapshots are refused.
pub(crate) const SNAPSHOT_FORMAT: u32 = 2;
const MAGIC: &[u8; 8] = b"SLUICESN";
const TAG_BYTES: usize = 32;
/// Largest snapshot accepted (compressed), and largest payload it may expand to.
pub(crate) const MAX_SNAPSHOT_BYTES: usize = 1 << 30;
pub(crate) const MAX_PAYLOAD_BYTES: usize = 4 << 30;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SnapshotError {
    #[error("not a Sluice snapshot")]
    NotASnapshot,
    #[error("the snapshot's seal does not match: it was changed, or made with another key")]
    Tampered,
    #[error("snapshot format {found} is not this build's ({SNAPSHOT_FORMAT})")]
    WrongFormat { found: u32 },
    #[error("the snapshot belongs to image {found}, not to this build's {expected}")]
    WrongImage { found: String, expected: String },
    #[error("the snapshot is damaged: {0}")]
    Damaged(String),
}

/// One journaled step, without its bytes (they follow in the payload, in order).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct StepHeader {
    /// true: a request frame; false: the answer to a blocking wait.
    pub frame: bool,
    pub now_ns: u64,
    pub response: Option<u64>,
    pub len: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CheckpointHeader {
    pub memory_size: u64,
    pub clock_now_ns: u64,
    pub random_state: u64,
    /// Indices of the 4 KiB pages that follow in the payload.
    pub pages: Vec<u32>,
}

/// The execution a snapshot was taken in the middle of (waiting for tool results).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RunningHeader {
    pub limits: super::Limits,
    pub run_time_us: u64,
    pub tool_calls: u64,
    pub next_seq: u64,
    /// Calls outstanding: (the guest's number, the host's number).
    pub outstanding: Vec<(u64, u64)>,
    pub argument_budget: u64,
    pub steps: Vec<StepHeader>,
    pub stdout: String,
    pub stderr: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Header {
    pub format: u32,
    pub image_hash: String,
    /// The container it was taken of: a snapshot is restored as that container only (or
    /// forked from it), never passed off as another.
    pub container_id: String,
    /// What the host keeps with the container (its owner, a waiting execution...), sealed
    /// with it; opaque to the sandbox.
    pub host: serde_json::Value,
    pub seed: u64,
    pub executions: u64,
    pub checkpoint: Option<CheckpointHeader>,
    pub journal: Vec<StepHeader>,
    pub running: Option<RunningHeader>,
}

fn seal(key: &[u8], body: &[u8]) -> [u8; TAG_BYTES] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(body);
    mac.finalize().into_bytes().into()
}

/// Seals `header` and `payload` (pages, then frames) with `key`.
pub(crate) fn encode(header: &Header, payload: &[u8], key: &[u8]) -> Vec<u8> {
    let header = serde_json::to_vec(header).expect("the header serializes");
    let mut body = Vec::with_capacity(header.len() + payload.len() / 2 + 8);
    body.extend_from_slice(&(header.len() as u32).to_le_bytes());
    body.extend_from_slice(&header);
    body.extend_from_slice(&lz4_flex::compress_prepend_size(payload));
    let mut out = Vec::with_capacity(MAGIC.len() + TAG_BYTES + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&seal(key, &body));
    out.extend_from_slice(&body);
    out
}

/// Checks the seal, format and image, then returns the header and the payload.
pub(crate) fn decode(bytes: &[u8], key: &[u8], image_hash: &str) -> Result<(Header, Vec<u8>), SnapshotError> {
    let (header, compressed) = open(bytes, key, image_hash)?;
    let expected = compressed.get(..4).map(|n| u32::from_le_bytes(n.try_into().expect("4 bytes")) as usize);
    if expected.is_none_or(|n| n > MAX_PAYLOAD_BYTES) {
        return Err(SnapshotError::Damaged("payload size".into()));
    }
    let payload = lz4_flex::decompress_size_prepended(compressed).map_err(|e| SnapshotError::Damaged(e.to_string()))?;
    Ok((header, payload))
}

/// Checks the seal, format and image, then returns the header and the still compressed
/// payload (reading the header alone costs no decompression).
pub(crate) fn open<'a>(bytes: &'a [u8], key: &[u8], image_hash: &str) -> Result<(Header, &'a [u8]), SnapshotError> {
    if bytes.len() > MAX_SNAPSHOT_BYTES || bytes.len() < MAGIC.len() + TAG_BYTES + 4 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(SnapshotError::NotASnapshot);
    }
    let (tag, body) = bytes[MAGIC.len()..].split_at(TAG_BYTES);
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(body);
    mac.verify_slice(tag).map_err(|_| SnapshotError::Tampered)?;
    let header_len = u32::from_le_bytes(body[..4].try_into().expect("4 bytes")) as usize;
    let header_end = header_len.checked_add(4).ok_or_else(|| SnapshotError::Damaged("header length".into()))?;
    let header_bytes = body.get(4..header_end).ok_or_else(|| SnapshotError::Damaged("short header".into()))?;
    let header: Header = serde_json::from_slice(header_bytes).map_err(|e| SnapshotError::Damaged(e.to_string()))?;
    if header.format != SNAPSHOT_FORMAT {
        return Err(SnapshotError::WrongFormat { found: header.format });
    }
    if header.image_hash != image_hash {
        return Err(SnapshotError::WrongImage { found: header.image_hash, expected: image_hash.to_owned() });
    }
    Ok((header, &body[header_end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            format: SNAPSHOT_FORMAT,
            image_hash: "img".into(),
            container_id: "c".into(),
            host: serde_json::json!({"owner": "o"}),
            seed: 1,
            executions: 2,
            checkpoint: None,
            journal: vec![],
            running: None,
        }
    }

    #[test]
    fn a_sealed_snapshot_round_trips_and_refuses_changes() {
        let bytes = encode(&header(), b"payload bytes", b"key");
        let (decoded, payload) = decode(&bytes, b"key", "img").unwrap();
        assert_eq!((decoded.seed, payload.as_slice()), (1, &b"payload bytes"[..]));

        assert_eq!(decode(&bytes, b"other key", "img").unwrap_err(), SnapshotError::Tampered);
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(decode(&flipped, b"key", "img").unwrap_err(), SnapshotError::Tampered);
        assert!(matches!(decode(&bytes, b"key", "another image"), Err(SnapshotError::WrongImage { .. })));
        assert_eq!(decode(b"garbage", b"key", "img").unwrap_err(), SnapshotError::NotASnapshot);
        let old = encode(&Header { format: 0, ..header() }, b"", b"key");
        assert_eq!(decode(&old, b"key", "img").unwrap_err(), SnapshotError::WrongFormat { found: 0 });
    }
}
