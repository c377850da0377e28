-- Token figures say when part of them is an estimate (long text is not counted exactly).
ALTER TABLE executions ADD COLUMN tokens_estimated BIGINT NOT NULL DEFAULT 0;
CREATE INDEX executions_status ON executions (status);

-- When a container was deleted or expired: its chain stays for audit, but it is never
-- rebuilt from it.
ALTER TABLE containers ADD COLUMN closed_at BIGINT;
ALTER TABLE containers ADD COLUMN closed_reason TEXT;

-- A waiting execution's state now travels inside the sealed snapshot (run_state is no longer
-- written); this column only names it for recovery at start (the sealed copy decides).
ALTER TABLE container_snapshots ADD COLUMN waiting_execution TEXT;

-- Fingerprints of the key that seals this store's snapshots and audit chains (never the
-- key): a node started with another key is refused at start.
CREATE TABLE server_keys (
    purpose TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL
);
