//! The hash chain: records sealed by HMAC-SHA256 and linked each to the one before, and its checks.

use super::Event;
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// `prev_hash` of the first record of a chain.
pub(crate) const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A stored record of a chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub container_id: String,
    pub seq: i64,
    pub kind: String,
    pub execution_id: Option<String>,
    pub recorded_at: i64,
    /// The event as JSON text: hashed as stored.
    pub body: String,
    pub prev_hash: String,
    pub hash: String,
}

impl Record {
    pub fn event(&self) -> Result<Event, serde_json::Error> {
        serde_json::from_str(&self.body)
    }
}

/// The seal of a record: HMAC-SHA256 under the chain key over its chain position and content.
pub(crate) fn record_hash(
    key: &[u8],
    prev_hash: &str,
    container_id: &str,
    seq: i64,
    kind: &str,
    recorded_at: i64,
    body: &str,
) -> String {
    use hmac::{Hmac, Mac};
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    for part in [prev_hash, container_id, &seq.to_string(), kind, &recorded_at.to_string(), body] {
        mac.update(&(part.len() as u64).to_le_bytes());
        mac.update(part.as_bytes());
    }
    crate::call::hex(&mac.finalize().into_bytes())
}

/// Whether one record's seal matches its content (its link to the record before is not
/// checked: for records read apart from their chain).
pub(crate) fn record_seal_holds(key: &[u8], record: &Record) -> bool {
    let hash = record_hash(
        key,
        &record.prev_hash,
        &record.container_id,
        record.seq,
        &record.kind,
        record.recorded_at,
        &record.body,
    );
    hash == record.hash
}

/// Where a chain breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("container {container_id}, record {seq}: {problem}")]
pub struct ChainBreak {
    pub container_id: String,
    pub seq: i64,
    pub problem: String,
}

/// Checks one container's records (in seq order): contiguous from 0, each linked to the
/// one before, each sealed by `key` over its content.
pub fn verify_chain(key: &[u8], container_id: &str, records: &[Record]) -> Result<(), ChainBreak> {
    verify_chain_from(key, container_id, (-1, GENESIS_HASH), records)
}

/// Checks records that continue a chain after `(seq, hash)`, its last record known good.
pub(crate) fn verify_chain_from(
    key: &[u8],
    container_id: &str,
    (after_seq, after_hash): (i64, &str),
    records: &[Record],
) -> Result<(), ChainBreak> {
    let mut prev_hash = after_hash.to_owned();
    for (offset, record) in records.iter().enumerate() {
        let expected_seq = after_seq + 1 + offset as i64;
        let broken = |problem: String| ChainBreak { container_id: container_id.to_owned(), seq: record.seq, problem };
        if record.seq != expected_seq {
            return Err(ChainBreak {
                container_id: container_id.to_owned(),
                seq: expected_seq,
                problem: format!("missing (the next record is {}): deleted", record.seq),
            });
        }
        if record.container_id != container_id {
            return Err(broken(format!("belongs to container {}: moved", record.container_id)));
        }
        if record.prev_hash != prev_hash {
            return Err(broken("does not follow the record before it: reordered or a record was replaced".into()));
        }
        if !record_seal_holds(key, record) {
            return Err(broken("content does not match its seal: edited, or sealed with another key".into()));
        }
        prev_hash.clone_from(&record.hash);
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    const KEY: &[u8] = b"a test chain key";

    /// `events` as the records of container `c`, sealed by [`KEY`].
    pub(in crate::audit) fn chain(events: &[Event]) -> Vec<Record> {
        let mut prev = GENESIS_HASH.to_owned();
        events
            .iter()
            .enumerate()
            .map(|(seq, event)| {
                let body = serde_json::to_string(event).unwrap();
                let hash = record_hash(KEY, &prev, "c", seq as i64, event.kind(), 7, &body);
                let record = Record {
                    container_id: "c".into(),
                    seq: seq as i64,
                    kind: event.kind().into(),
                    execution_id: event.execution_id().map(str::to_owned),
                    recorded_at: 7,
                    body,
                    prev_hash: prev.clone(),
                    hash: hash.clone(),
                };
                prev = hash;
                record
            })
            .collect()
    }

    /// A container created, an execution started in it, one step of it.
    pub(in crate::audit) fn events() -> Vec<Event> {
        vec![
            Event::ContainerCreated { owner: "o".into(), seed: "42".into(), image_hash: "i".into(), forked_from: None },
            Event::ExecutionStarted {
                execution_id: "e".into(),
                owner: "o".into(),
                number: 1,
                code: "print(1)".into(),
                code_sha256: "x".into(),
                tools: serde_json::json!([]),
                limits: serde_json::json!({}),
                now_ns: 5,
                started_at: 6,
                files: Vec::new(),
            },
            Event::Step { execution_id: "e".into(), now_ns: 9, answered: vec![0], files: Vec::new() },
        ]
    }

    #[test]
    fn verify_finds_edits_deletions_and_reordering() {
        let records = chain(&events());
        assert_eq!(verify_chain(KEY, "c", &records), Ok(()));

        let mut edited = records.clone();
        edited[1].body = edited[1].body.replace("print(1)", "print(2)");
        assert!(verify_chain(KEY, "c", &edited).unwrap_err().problem.contains("edited"));

        let mut deleted = records.clone();
        deleted.remove(1);
        assert!(verify_chain(KEY, "c", &deleted).unwrap_err().problem.contains("deleted"));

        let mut reordered = records.clone();
        reordered.swap(1, 2);
        (reordered[1].seq, reordered[2].seq) = (1, 2);
        assert!(verify_chain(KEY, "c", &reordered).is_err());
    }

    /// Item 13 of the security review: the chain was plain SHA-256, so whoever could write the
    /// database could edit a record and recompute every hash after it.
    #[test]
    fn item13_a_chain_rehashed_without_the_key_does_not_verify() {
        let records = chain(&events());
        let mut forged = records.clone();
        forged[1].body = forged[1].body.replace("print(1)", "print(2)");
        let mut prev = GENESIS_HASH.to_owned();
        for record in &mut forged {
            record.prev_hash = prev.clone();
            record.hash = record_hash(b"the forger's guess", &prev, "c", record.seq, &record.kind, 7, &record.body);
            prev = record.hash.clone();
        }
        assert!(verify_chain(KEY, "c", &forged).unwrap_err().problem.contains("seal"));
        assert!(verify_chain_from(KEY, "c", (0, &records[0].hash), &records[1..]).is_ok());
        assert!(record_seal_holds(KEY, &records[2]) && !record_seal_holds(KEY, &forged[2]));
    }
}
