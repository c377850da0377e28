//! The server key: one secret, kept outside the database, from which the keys that seal
//! container snapshots and the audit chain are derived.
//!
//! Whoever can write the database but does not hold this key cannot forge a container's state
//! or rewrite its history unnoticed. Nodes sharing a store share the key; the store keeps a
//! fingerprint of it (never the key) so that a node started with another key is refused at
//! start rather than failing on the first record or snapshot another node wrote.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::path::{Path, PathBuf};

/// Bytes of a key created when none is given.
pub(crate) const SERVER_KEY_BYTES: usize = 32;
/// A shorter key is guessable; HMAC itself would take any length.
pub(crate) const MIN_SERVER_KEY_BYTES: usize = 16;
/// The key file in the data directory.
pub(crate) const KEY_FILE: &str = "server.key";
/// The name the key file had before it also sealed the audit chain; read if present.
const LEGACY_KEY_FILE: &str = "snapshot.key";

/// The server's secret.
#[derive(Clone)]
pub struct ServerKey(Vec<u8>);

impl std::fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServerKey({})", self.fingerprint())
    }
}

impl ServerKey {
    pub fn new(secret: impl Into<Vec<u8>>) -> Result<Self, String> {
        let secret = secret.into();
        if secret.len() < MIN_SERVER_KEY_BYTES {
            return Err(format!("the server key must be at least {MIN_SERVER_KEY_BYTES} bytes"));
        }
        Ok(Self(secret))
    }

    /// A fresh random key (for processes that keep nothing, and tests).
    pub fn random() -> Self {
        let mut secret = vec![0u8; SERVER_KEY_BYTES];
        getrandom::fill(&mut secret).expect("the OS has randomness");
        Self(secret)
    }

    fn derive(&self, purpose: &str) -> [u8; 32] {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// Seals container snapshots.
    pub fn snapshot_key(&self) -> Vec<u8> {
        self.derive("sluice snapshot seal v1").to_vec()
    }

    /// Seals the audit chain's records.
    pub fn chain_key(&self) -> Vec<u8> {
        self.derive("sluice audit chain v1").to_vec()
    }

    /// Names the key without revealing it (hex of a derived value).
    pub fn fingerprint(&self) -> String {
        crate::call::hex(&self.derive("sluice key fingerprint v1")[..16])
    }

    /// The key in `data_dir`, created (0600, random) if there is none. The directory must
    /// exist already.
    pub fn load_or_create(data_dir: &Path) -> Result<Self, String> {
        if let Some(key) = Self::load(data_dir)? {
            return Ok(key);
        }
        let path = data_dir.join(KEY_FILE);
        let key = Self::random();
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        file.write_all(&key.0).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        file.sync_all().map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(key)
    }

    /// The key in `data_dir`, if there is one.
    pub fn load(data_dir: &Path) -> Result<Option<Self>, String> {
        for name in [KEY_FILE, LEGACY_KEY_FILE] {
            let path = data_dir.join(name);
            match std::fs::read(&path) {
                Ok(secret) => {
                    return Self::new(secret).map(Some).map_err(|e| format!("{}: {e}", path.display()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
            }
        }
        Ok(None)
    }

    /// Where the key of `data_dir` is kept.
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join(KEY_FILE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_keys_differ_by_purpose_and_fingerprints_by_key() {
        let key = ServerKey::new(b"0123456789abcdef".to_vec()).unwrap();
        assert_ne!(key.snapshot_key(), key.chain_key());
        assert_eq!(key.fingerprint().len(), 32);
        assert_ne!(key.fingerprint(), ServerKey::random().fingerprint());
        assert!(!format!("{key:?}").contains("0123456789"), "Debug never shows the secret");
        assert!(ServerKey::new(b"short".to_vec()).is_err());
    }

    #[test]
    fn a_key_is_created_once_private_and_read_back() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("sluice-key-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let created = ServerKey::load_or_create(&dir).unwrap();
        let mode = std::fs::metadata(ServerKey::path(&dir)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(ServerKey::load_or_create(&dir).unwrap().fingerprint(), created.fingerprint());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
