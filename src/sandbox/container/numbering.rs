//! Call numbering: the host numbers an execution's tool calls itself and keeps, for each call
//! outstanding, the number the guest gave it, which is only a token to send its result back
//! under. Nothing the guest numbers reaches the ledger.

use std::collections::HashMap;

/// The calls of an execution the guest waits on, by the host's number and by the guest's.
/// Results go back under the guest's number; nothing the guest numbers reaches the ledger.
#[derive(Default)]
pub(super) struct Outstanding {
    guest_of: HashMap<u64, u64>,
    host_of: HashMap<u64, u64>,
}

impl Outstanding {
    pub(super) fn insert(&mut self, guest: u64, host: u64) {
        self.guest_of.insert(host, guest);
        self.host_of.insert(guest, host);
    }

    /// The guest's number of an answered call; the call is no longer outstanding.
    pub(super) fn answer(&mut self, host: u64) -> Option<u64> {
        let guest = self.guest_of.remove(&host)?;
        self.host_of.remove(&guest);
        Some(guest)
    }

    /// The host's number of a call the guest cancelled; `None` for one it does not have.
    pub(super) fn cancel(&mut self, guest: u64) -> Option<u64> {
        let host = self.host_of.remove(&guest)?;
        self.guest_of.remove(&host);
        Some(host)
    }

    /// Whether the guest already has a call outstanding under this number.
    pub(super) fn has_guest(&self, guest: u64) -> bool {
        self.host_of.contains_key(&guest)
    }

    pub(super) fn len(&self) -> usize {
        self.guest_of.len()
    }

    /// (guest, host) pairs, in host order (snapshots keep them).
    pub(super) fn pairs(&self) -> Vec<(u64, u64)> {
        let mut pairs: Vec<(u64, u64)> = self.host_of.iter().map(|(&g, &h)| (g, h)).collect();
        pairs.sort_by_key(|&(_, host)| host);
        pairs
    }
}
